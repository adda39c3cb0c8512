import { ConflictException, Controller, Param, Post } from '@nestjs/common';
import { UniqueKeyViolationError } from '@ddd-kit/repository';
import { AppService } from './app.service.js';

@Controller()
export class AppController {
  constructor(private readonly appService: AppService) {}

  @Post('users/:username')
  async register(@Param('username') username: string): Promise<{ id: string }> {
    try {
      return { id: await this.appService.register(username) };
    } catch (error) {
      if (error instanceof UniqueKeyViolationError) {
        throw new ConflictException(`${error.name} '${error.key}' is taken`);
      }
      throw error;
    }
  }
}
