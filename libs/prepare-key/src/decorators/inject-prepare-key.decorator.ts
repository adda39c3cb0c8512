import { Inject } from '@nestjs/common';
import type { PrepareKeyClass } from '../interfaces/preparable-key-declaration.interface.js';
import { getPrepareKeyToken } from '../prepare-key.utils.js';

/** Injects the key of that name (or of the name a class declares): `@InjectPrepareKey('sku') skus: PrepareKey<Sku>`. */
export const InjectPrepareKey = (nameOrClass: string | PrepareKeyClass): PropertyDecorator & ParameterDecorator =>
  Inject(getPrepareKeyToken(nameOrClass));
