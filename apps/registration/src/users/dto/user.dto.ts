import { ApiProperty } from '@nestjs/swagger';
import { USERNAME_PATTERN, USERNAME_RULE } from '../username.js';

// Response shapes, for the OpenAPI document: the handlers return plain objects of these shapes.

export class UserDto {
  @ApiProperty({
    description: "15 characters [0-9A-Za-z], from the user aggregate's ID generator",
    example: '0VcRBkd00000000',
  })
  id!: string;

  @ApiProperty({ description: `case-folded; ${USERNAME_RULE}`, pattern: USERNAME_PATTERN.source, example: 'alice' })
  username!: string;

  @ApiProperty({ description: 'the stored version: send it back in If-Match', example: 1, minimum: 1 })
  version!: number;
}

export class RegisteredUserDto extends UserDto {
  @ApiProperty({
    description:
      'Returned once, by this response only: send it as `Authorization: Bearer <secret>` to rename or delete this user. The service keeps only its SHA-256.',
    pattern: '^[A-Za-z0-9_-]{43}$',
    example: 'q3Jd0xN1M6E3bYv0t0r7fS8b0rJm5oV4l2c9w1z8QkA',
  })
  secret!: string;
}

export class UsernameAvailabilityDto {
  @ApiProperty({ description: 'the name, case-folded', example: 'alice' })
  username!: string;

  @ApiProperty({ example: true })
  available!: boolean;
}
