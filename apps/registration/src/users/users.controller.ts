import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiPreconditionFailedResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ETag, IfMatch } from '@ddd-kit/repository/http';
import { RequiresUserSecret } from '../auth/user-secret.decorator.js';
import { issueUserSecret } from '../auth/user-secret.js';
import { ErrorBody } from '../common/error-body.dto.js';
import { RegisteredUserDto, UserDto } from './dto/user.dto.js';
import { UsernameBody, UsernameQuery } from './dto/username.dto.js';
import { IdempotentCommand } from './idempotent-command.decorator.js';
import type { UserView } from './user.aggregate.js';
import { UsersService } from './users.service.js';

const ETAG = { ETag: { description: 'the user\'s version, quoted: "<version>"', schema: { type: 'string' } } };
const ID_PARAM = { name: 'id', description: "the user's ID", example: '0VcRBkd00000000' };
const badInput = (what: string) => ApiBadRequestResponse({ description: what, type: ErrorBody });
const notFound = ApiNotFoundResponse({ description: 'no such user', type: ErrorBody });
const taken = ApiConflictResponse({ description: 'the name is taken', type: ErrorBody });

@ApiTags('users')
@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post()
  @ETag()
  // The secret is kept encrypted, under the caller's key: a repeat gets it back, the store never in the clear.
  @IdempotentCommand({ secretFields: ['secret'] })
  @ApiOperation({
    summary: 'Register a user',
    description: "Reserves the name, then stores the user. The response carries the user's secret, once.",
  })
  @ApiCreatedResponse({
    description: 'registered: the user, with its secret (shown this once)',
    type: RegisteredUserDto,
    headers: { ...ETAG, Location: { description: '/users/<id>', schema: { type: 'string' } } },
  })
  @badInput(
    'the body is not `{ "username" }` with a valid name (unknown fields, malformed JSON and bodies over 16 KB included)',
  )
  @taken
  async register(
    @Body() body: UsernameBody,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserView & { secret: string }> {
    const { secret, hash } = issueUserSecret();
    const user = await this.users.register(body.username, hash);
    res.location(`/users/${encodeURIComponent(user.id)}`);
    // The secret is shown this once: no cache along the way may keep a copy.
    res.setHeader('Cache-Control', 'no-store');
    return { ...user, secret };
  }

  /** From the read model, kept by data-sync events. */
  @Get()
  @ApiOperation({
    summary: 'Find users by name',
    description: 'From the read model, which data-sync events keep up to date.',
  })
  @ApiOkResponse({ description: 'the users holding that name in the read model (at most one)', type: [UserDto] })
  @badInput('`username` missing, repeated or invalid')
  findByUsername(@Query() query: UsernameQuery): Promise<UserView[]> {
    return this.users.findByUsername(query.username);
  }

  @Get(':id')
  @ETag()
  @ApiOperation({ summary: 'Read a user' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ description: 'the user', type: UserDto, headers: ETAG })
  @notFound
  get(@Param('id') id: string): Promise<UserView> {
    return this.users.get(id);
  }

  @Patch(':id/username')
  @RequiresUserSecret()
  @ETag()
  @IdempotentCommand()
  @ApiOperation({
    summary: 'Rename a user',
    description:
      'Reserves the new name, updates the user where its version is still If-Match, then releases the old name.',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader({ name: 'If-Match', required: true, description: 'the version last read: 3, "3" or W/"3"' })
  @ApiOkResponse({
    type: UserDto,
    headers: ETAG,
    description: 'renamed (version + 1), or already that name (unchanged)',
  })
  @badInput(
    'a missing, malformed, empty or repeated If-Match, or a body that is not `{ "username" }` with a valid name',
  )
  @notFound
  @taken
  @ApiPreconditionFailedResponse({
    description: 'the user is no longer at the If-Match version; the new name is released',
    type: ErrorBody,
  })
  rename(
    @Param('id') id: string,
    @Body() body: UsernameBody,
    @IfMatch({ required: true }) expectedVersion: number,
  ): Promise<UserView> {
    return this.users.rename(id, body.username, expectedVersion);
  }

  /** `If-Match` is optional here: without it the user is deleted at whatever version it has (never a 412). */
  @Delete(':id')
  @HttpCode(204)
  @RequiresUserSecret()
  @IdempotentCommand()
  @ApiOperation({
    summary: 'Delete a user',
    description: 'Deletes the user, then releases its name; the read model drops it.',
  })
  @ApiParam(ID_PARAM)
  @ApiHeader({
    name: 'If-Match',
    required: false,
    description: 'when sent, the user is deleted only at this version; without it, at whatever version it has',
  })
  @ApiNoContentResponse({ description: 'deleted' })
  @badInput('a malformed, empty or repeated If-Match')
  @notFound
  @ApiConflictResponse({
    description: 'without If-Match: the user changed under every attempt to delete it; retry',
    type: ErrorBody,
  })
  @ApiPreconditionFailedResponse({ description: 'the user is no longer at the If-Match version', type: ErrorBody })
  async remove(@Param('id') id: string, @IfMatch() expectedVersion: number | undefined): Promise<void> {
    await this.users.remove(id, expectedVersion);
  }
}
