// A Jest setup file (setupFilesAfterEnv): loads the Nest modules that bridged.cjs hands to
// nestjs-cls, into the test file's module registry, before the test file and with it the
// application load. Only for the tests of apps/ (the sample uses nestjs-cls in the test's
// process); elsewhere nothing is loaded that the test does not load itself.
import { createRequire } from 'node:module';
import { expect } from '@jest/globals';

const { SPECIFIERS, KEY } = createRequire(import.meta.url)('./bridged.cjs');

if (/[\\/]apps[\\/]/.test(expect.getState().testPath ?? '')) {
  const loaded = {};
  for (const specifier of SPECIFIERS) loaded[specifier] = await import(specifier);
  globalThis[Symbol.for(KEY)] = loaded;
}
