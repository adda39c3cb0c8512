// `node --import ./block-drivers.mjs …`: the packages named in DDD_KIT_BLOCKED (comma-separated)
// cannot be imported, as in a project that never installed them. The memory-backend check runs
// this way, proving that a user who installs none of the optional peers (drivers,
// @opentelemetry/api) can import and boot every library even though the scratch project has
// them installed for the drivers check.
import Module, { register } from 'node:module';

const blocked = (process.env.DDD_KIT_BLOCKED ?? '').split(',').filter(Boolean);
register('./block-drivers.hooks.mjs', import.meta.url, { data: { blocked } });

// The hooks above see `import`; an optional peer loaded with `require` (createRequire) is
// resolved here instead.
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const name = request.startsWith('@') ? request.split('/').slice(0, 2).join('/') : request.split('/')[0];
  if (blocked.includes(name)) {
    const error = new Error(`Cannot find module '${name}' (not installed: an optional peer)`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolveFilename.call(this, request, ...rest);
};
