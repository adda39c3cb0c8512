import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';

@ApiTags('health')
@Controller('health')
export class HealthController {
  @Get()
  @ApiOperation({ summary: 'The process answers' })
  @ApiOkResponse({ description: 'the process is up', schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } } } })
  check(): { status: 'ok' } {
    return { status: 'ok' };
  }
}
