// `node --import ./block-drivers.mjs …`: the packages named in DDD_KIT_BLOCKED (comma-separated)
// cannot be imported, as in a project that never installed them. The memory-backend check runs
// this way, proving that a user who installs none of the optional drivers can import and boot
// every library even though the scratch project has them installed for the drivers check.
import { register } from 'node:module';

register('./block-drivers.hooks.mjs', import.meta.url, { data: { blocked: (process.env.DDD_KIT_BLOCKED ?? '').split(',').filter(Boolean) } });
