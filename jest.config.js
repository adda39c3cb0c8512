// Nest 12 ships pure ES modules, so Jest runs in native ESM mode (see package.json "test").
import { jestModuleNameMapper } from './scripts/workspace-entries.js';

/** @type {import('jest').Config} */
export default {
  // Node, plus removal of what each test file created on the test servers (see the file).
  testEnvironment: '<rootDir>/test/support/test-environment.js',
  rootDir: '.',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    // Every entry point of the libraries' package.json "exports", to its source.
    ...jestModuleNameMapper(),
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  // nestjs-cls is CommonJS requiring the ES-module-only Nest 12, which Jest on Node < 24.9 cannot
  // do: these two hand it the test's own Nest modules (see test/support/nest-esm-bridge/bridged.cjs).
  resolver: '<rootDir>/test/support/nest-esm-bridge/resolver.cjs',
  setupFilesAfterEnv: ['<rootDir>/test/support/nest-esm-bridge/setup.js'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }],
  },
  testMatch: [
    '<rootDir>/libs/*/src/**/*.spec.ts',
    '<rootDir>/apps/*/{src,test}/**/*.spec.ts',
    '<rootDir>/test/**/*.spec.ts',
  ],
  // test/packaging/newcomer is a project of its own (Vitest): the packaging test runs its tests there.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/packaging/newcomer/'],
  modulePathIgnorePatterns: [
    '<rootDir>/libs/.*/dist/',
    '<rootDir>/apps/.*/dist/',
    '<rootDir>/test/packaging/newcomer/',
  ],
  // Slowest files first (see the file): on a fresh clone Jest would start them last.
  testSequencer: '<rootDir>/test/support/slowest-first.sequencer.js',
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  testTimeout: 60_000,
  // The fault cases that run at once (it.concurrent) wait out a client timeout each: one wave
  // holds every case of a fault (13 operations) instead of three waves of five.
  maxConcurrency: 13,
  // Most files spend their time waiting on other processes (app instances, servers, a fault's
  // client timeout), not computing: a third worker keeps two cores busy.
  maxWorkers: 3,
};
