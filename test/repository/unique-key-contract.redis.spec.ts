// The unique-key contract with reservations on Redis, against every repository backend.
import { describeUniqueKeysOn } from './support/unique-key-backends.js';

describeUniqueKeysOn('redis');
