import { Inject } from '@nestjs/common';
import { getIdGeneratorToken } from './id-generator.utils.js';

/** Injects the generator configured under `name` in IdGeneratorModule `generators`. */
export const InjectIdGenerator = (name: string): PropertyDecorator & ParameterDecorator =>
  Inject(getIdGeneratorToken(name));
