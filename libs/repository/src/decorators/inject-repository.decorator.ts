import { Inject } from '@nestjs/common';
import type { AggregateClass } from '../aggregate/aggregate-root.js';
import { getRepositoryToken } from '../repository.utils.js';

/** Injects the repository RepositoryModule.forFeature registered for `aggregate`. */
export const InjectRepository = (aggregate: AggregateClass | string): PropertyDecorator & ParameterDecorator =>
  Inject(getRepositoryToken(aggregate));
