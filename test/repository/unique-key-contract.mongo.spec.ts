// The unique-key contract with reservations on the MongoDB-wire server, against every repository backend.
import { describeUniqueKeysOn } from './support/unique-key-backends.js';

describeUniqueKeysOn('mongo');
