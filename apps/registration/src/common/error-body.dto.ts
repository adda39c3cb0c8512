import { ApiProperty } from '@nestjs/swagger';

/** The body of every error response (Nest's HttpException shape). */
export class ErrorBody {
  @ApiProperty({ example: 409 })
  statusCode!: number;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: "username 'alice' is already taken",
  })
  message!: string | string[];

  @ApiProperty({ example: 'Conflict' })
  error!: string;
}
