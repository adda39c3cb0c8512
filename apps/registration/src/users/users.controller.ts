import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Patch, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { UsernameBody, UsernameQuery } from './dto/username.dto.js';
import { etagOf, parseIfMatch } from './if-match.js';
import type { UserView } from './user.aggregate.js';
import { UsersService } from './users.service.js';

@Controller('users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Post()
  async register(@Body() body: UsernameBody, @Res({ passthrough: true }) res: Response): Promise<UserView> {
    const user = await this.users.register(body.username);
    res.setHeader('ETag', etagOf(user.version)).location(`/users/${encodeURIComponent(user.id)}`);
    return user;
  }

  /** From the read model, kept by data-sync events. */
  @Get()
  findByUsername(@Query() query: UsernameQuery): Promise<UserView[]> {
    return this.users.findByUsername(query.username);
  }

  @Get(':id')
  async get(@Param('id') id: string, @Res({ passthrough: true }) res: Response): Promise<UserView> {
    const user = await this.users.get(id);
    res.setHeader('ETag', etagOf(user.version));
    return user;
  }

  @Patch(':id/username')
  async rename(
    @Param('id') id: string,
    @Body() body: UsernameBody,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) res: Response,
  ): Promise<UserView> {
    const user = await this.users.rename(id, body.username, parseIfMatch(ifMatch, true)!);
    res.setHeader('ETag', etagOf(user.version));
    return user;
  }

  /** `If-Match` is optional here: without it the user is deleted at whatever version it has. */
  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('id') id: string, @Headers('if-match') ifMatch: string | undefined): Promise<void> {
    await this.users.remove(id, parseIfMatch(ifMatch, false));
  }
}
