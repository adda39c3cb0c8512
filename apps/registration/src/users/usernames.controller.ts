import { Controller, Get, Param } from '@nestjs/common';
import { normalizeUsername } from './username.js';
import { UsersService } from './users.service.js';

@Controller('usernames')
export class UsernamesController {
  constructor(private readonly users: UsersService) {}

  @Get(':name')
  async availability(@Param('name') name: string): Promise<{ username: string; available: boolean }> {
    const username = normalizeUsername(name);
    return { username, available: await this.users.isAvailable(username) };
  }
}
