// The unique-key contract with reservations in memory, against every repository backend.
import { describeUniqueKeysOn } from './support/unique-key-backends.js';

describeUniqueKeysOn('memory');
