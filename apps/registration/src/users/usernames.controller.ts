import { Controller, Get, Param } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { ErrorBody } from '../common/error-body.dto.js';
import { UsernameAvailabilityDto } from './dto/user.dto.js';
import { normalizeUsername } from './username.js';
import { UsersService } from './users.service.js';

@ApiTags('usernames')
@Controller('usernames')
export class UsernamesController {
  constructor(private readonly users: UsersService) {}

  @Get(':name')
  @ApiOperation({ summary: 'Is a name free?' })
  @ApiParam({ name: 'name', description: 'any case', example: 'Alice' })
  @ApiOkResponse({ description: 'the folded name, and whether nobody holds it', type: UsernameAvailabilityDto })
  @ApiBadRequestResponse({ description: 'not a valid name', type: ErrorBody })
  async availability(@Param('name') name: string): Promise<{ username: string; available: boolean }> {
    const username = normalizeUsername(name);
    return { username, available: await this.users.isAvailable(username) };
  }
}
