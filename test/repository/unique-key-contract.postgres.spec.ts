// The unique-key contract with reservations on PostgreSQL, against every repository backend.
import { describeUniqueKeysOn } from './support/unique-key-backends.js';

describeUniqueKeysOn('postgres');
