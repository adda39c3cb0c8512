import { Inject } from '@nestjs/common';
import { getIdGeneratorContextToken, getIdGeneratorToken } from './id-generator.utils.js';

/** Injects the generator configured under `name` in IdGeneratorModule `generators`. */
export const InjectIdGenerator = (name: string): PropertyDecorator & ParameterDecorator =>
  Inject(getIdGeneratorToken(name));

/** Injects the module's IdGeneratorContext (see getIdGeneratorContextToken). */
export const InjectIdGeneratorContext = (): PropertyDecorator & ParameterDecorator =>
  Inject(getIdGeneratorContextToken());
