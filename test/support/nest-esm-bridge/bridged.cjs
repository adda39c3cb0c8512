// The Nest modules that nestjs-cls and @nestjs-cls/transactional require (they are CommonJS;
// Nest 12 is ES modules only), handed to them as the very instances the test imported.
//
// Node (20.19+) lets CommonJS require an ES module; Jest's module loader does so only on Node
// 24.9+. Below that, nestjs-cls cannot load in a test at all. So, in a test: setup.js imports
// each module below (as ES modules, the one copy the application uses too) before the test
// file loads, and resolver.cjs answers a require() of one of them from inside nestjs-cls with a
// small CommonJS file whose exports are that module's namespace. One copy of Nest either way:
// nestjs-cls's providers inject the same ModuleRef, Reflector and DiscoveryService classes as
// the application's.
const { mkdirSync, readFileSync, writeFileSync, renameSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

/** What the CommonJS packages of nestjs-cls require of Nest (checked by resolver.cjs). */
const SPECIFIERS = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/core/injector/injector',
  '@nestjs/core/errors/exceptions/unknown-dependencies.exception',
];

/** Where setup.js leaves the modules, on the test file's global object. */
const KEY = 'ddd-kit:jest:nest-esm-bridge';

const DIR = join(tmpdir(), 'ddd-kit-jest-nest-esm-bridge');

/** The CommonJS stand-in for `specifier` (written once; its content depends on the specifier only). */
function standInFor(specifier) {
  const file = join(DIR, `${createHash('sha256').update(specifier).digest('hex').slice(0, 16)}.cjs`);
  const content =
    `const loaded = globalThis[Symbol.for(${JSON.stringify(KEY)})];\n` +
    `if (loaded === undefined || !(${JSON.stringify(specifier)} in loaded))\n` +
    `  throw new Error(${JSON.stringify(`${specifier} was not loaded by test/support/nest-esm-bridge/setup.js (it loads them for the tests under apps/ only)`)});\n` +
    `module.exports = loaded[${JSON.stringify(specifier)}];\n`;
  let current;
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    current = undefined;
  }
  if (current !== content) {
    mkdirSync(DIR, { recursive: true });
    // Written aside and renamed: two workers writing at once never leave half a file.
    const partial = `${file}.${process.pid}.tmp`;
    writeFileSync(partial, content);
    renameSync(partial, file);
  }
  return file;
}

module.exports = { SPECIFIERS, KEY, standInFor };
