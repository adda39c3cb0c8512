import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, Matches } from 'class-validator';
import { foldUsername, USERNAME_PATTERN, USERNAME_RULE } from '../username.js';

// Case-folded (A–Z only) before validation, so the rule and everything after it see one form of a name.
const fold = ({ value }: { value: unknown }) => foldUsername(value);

/** Body of POST /users and PATCH /users/:id/username. Unknown fields are refused (400). */
export class UsernameBody {
  @ApiProperty({
    description: `case-insensitive; ${USERNAME_RULE}`,
    pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$',
    example: 'Alice',
  })
  @Transform(fold)
  @IsString({ message: `username must be a string: ${USERNAME_RULE}` })
  @Matches(USERNAME_PATTERN, { message: `username is invalid: ${USERNAME_RULE}` })
  username!: string;
}

/** Query of GET /users?username=. */
export class UsernameQuery extends UsernameBody {}
