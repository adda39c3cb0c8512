// Packages that install: each library under libs/ is packed with `npm pack` and installed from
// its tarball into scratch projects in the OS temp directory (outside the workspace: no
// workspace links, nothing resolved from the repository's node_modules). Three projects:
//  - `newest`: what a user does. ONE `npm install` in an empty directory, naming what the install
//    lines of the READMEs and docs/ name (each @ddd-kit package as its tarball), plus the peers no
//    line names, at their ranges: the registry's newest versions. It fails on ERESOLVE, and on any
//    npm warning about a ddd-kit package (its engines, its peers, its dependencies).
//  - `lowest`: every peer at the lowest version its range allows.
//  - `newcomer`: the project `nest new` makes (test/packaging/newcomer), the root README's install
//    line's tarballs installed into it; it builds, starts and passes its e2e test.
// `--prefer-offline`: npm's cache serves what it already holds; nothing else is shared.
// In the first two a TypeScript
// consumer (test/packaging/consumer) type-checks under `nodenext`, then runs: every library
// boots in a Nest application on its memory backend with the optional drivers made
// unimportable, and every library with optional drivers does a round trip on the real servers.
//
// A library added under libs/ is packed and installed too, and the test fails until it has a
// consumer check (`<dir>.memory.ts`, and `<dir>.drivers.ts` when it has optional driver peers).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import { markdownFiles } from '../docs/markdown-files.js';
import { freePort } from '../support/server-provider.js';
import { mongoUri, postgresUrl, redisUrl } from '../support/servers.js';
import { waitFor } from '../support/wait.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const consumerDir = join(root, 'test', 'packaging', 'consumer');
const newcomerDir = join(root, 'test', 'packaging', 'newcomer');
const run = promisify(execFile);

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
  engines?: { node?: string };
  exports?: Record<string, unknown>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  devDependencies?: Record<string, string>;
}

interface Library {
  dir: string; // libs/<dir>
  pkg: PackageJson;
  tarball?: string;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const rootPkg = readJson<PackageJson>(join(root, 'package.json'));
const libraries: Library[] = readdirSync(join(root, 'libs'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, 'libs', entry.name, 'package.json')))
  .map((entry) => ({ dir: entry.name, pkg: readJson<PackageJson>(join(root, 'libs', entry.name, 'package.json')) }));
const ownNames = new Set(libraries.map((lib) => lib.pkg.name));
const CORE = '@ddd-kit/core';
const corePkg = readJson<PackageJson>(join(root, 'libs', 'core', 'package.json'));

const optionalPeers = (pkg: PackageJson): string[] =>
  Object.keys(pkg.peerDependencies ?? {}).filter((name) => pkg.peerDependenciesMeta?.[name]?.optional === true);

/** The optional peers that are drivers (the rest, e.g. @jest/globals for a testing entry, only need to type-check). */
const DRIVERS = new Set(['ioredis', 'mongoose', 'mongodb', 'pg']);

/** Optional peers that are not drivers but that a library loads when present (telemetry). */
const LOADED_WHEN_PRESENT = new Set(['@opentelemetry/api']);
/**
 * What a subpath entry needs and its library does not declare (docs/versions.md says why and
 * states the range): `/health` imports @nestjs/terminus. Only that entry may import it; the main
 * entry must boot without it, so the memory check blocks it too. Installed at this range.
 */
const FEATURE_PEERS: Record<string, { range: string; entry: string }> = {
  '@nestjs/terminus': { range: '^12.2.0', entry: 'health' },
};

/** Types a TypeScript consumer of a peer installs beside it (the peer ships none). */
const TYPES_OF: Record<string, string> = { pg: '@types/pg' };

/** Every peer any library declares, with one range (libraries that share a peer must agree on it). */
function peerRanges(): Map<string, string> {
  const ranges = new Map<string, string>();
  const conflicts: string[] = [];
  for (const { pkg } of libraries) {
    for (const [name, range] of Object.entries(pkg.peerDependencies ?? {})) {
      if (ownNames.has(name)) continue;
      const known = ranges.get(name);
      if (known !== undefined && known !== range) conflicts.push(`${name}: '${known}' and '${range}' (${pkg.name})`);
      ranges.set(name, range);
    }
  }
  if (conflicts.length > 0)
    throw new Error(`libraries declare different ranges for one peer:\n${conflicts.join('\n')}`);
  for (const [name, { range }] of Object.entries(FEATURE_PEERS)) ranges.set(name, range);
  return ranges;
}

/** npm and node for the scratch projects, with nothing of the workspace's npm run leaking in. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD' && key !== 'NODE_OPTIONS') env[key] = value;
  }
  return { ...env, ...extra };
}

async function sh(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv(), timeout = 300_000) {
  try {
    return await run(file, args, { cwd, env, timeout, maxBuffer: 32 * 1024 * 1024 });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `\`${file} ${args.join(' ')}\` in ${cwd} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
      { cause: err },
    );
  }
}

/** One `npm install …` of a sh block in the READMEs or docs/: where, and the packages it names. */
interface InstallLine {
  file: string;
  command: string;
  packages: Array<{ name: string; spec?: string }>;
}

/** Every `npm install <package>…` line of the Markdown files the docs tests read (a bare `npm install` aside). */
function installLines(): InstallLine[] {
  const lines: InstallLine[] = [];
  for (const file of markdownFiles()) {
    const text = readFileSync(join(root, file), 'utf8');
    for (const block of text.matchAll(/```(?:sh|bash|shell)\n([\s\S]*?)```/g)) {
      for (const command of block[1].replace(/\\\n\s*/g, ' ').split('\n')) {
        const words = command.trim().split(/\s+/);
        if (words[0] !== 'npm' || (words[1] !== 'install' && words[1] !== 'i')) continue;
        const end = words.findIndex((word, i) => i > 1 && /^(&&|\|\||;|#|\|)/.test(word));
        // Options and tarballs (an example of installing packed packages) aside.
        const args = words
          .slice(2, end === -1 ? undefined : end)
          .filter((word) => !word.startsWith('-') && !word.endsWith('.tgz'));
        if (args.length === 0) continue;
        const packages = args.map((arg) => {
          const at = arg.indexOf('@', 1);
          return at === -1 ? { name: arg } : { name: arg.slice(0, at), spec: arg.slice(at + 1) };
        });
        lines.push({ file, command: command.trim(), packages });
      }
    }
  }
  return lines;
}

/** What each documented package is asked for; throws when two lines ask for one package differently. */
function documentedPackages(lines: InstallLine[]): Map<string, string | undefined> {
  const asked = new Map<string, string | undefined>();
  const conflicts: string[] = [];
  for (const line of lines) {
    for (const { name, spec } of line.packages) {
      if (asked.has(name) && asked.get(name) !== spec)
        conflicts.push(`${name}: '${asked.get(name) ?? ''}' and '${spec ?? ''}' (${line.file})`);
      asked.set(name, spec);
    }
  }
  if (conflicts.length > 0)
    throw new Error(`install lines ask for one package in different ways:\n${conflicts.join('\n')}`);
  return asked;
}

/**
 * npm's warnings about a ddd-kit package: its engines, its peers, one of its dependencies (all of
 * npm's warnings, when one is). On a Node.js outside the libraries' `engines` (Node.js 20, which
 * still runs this repository's tests) npm rightly warns EBADENGINE for each: those are let through.
 */
function ownWarnings(stderr: string): string[] {
  const ownDependencies = libraries.flatMap((lib) => Object.keys(lib.pkg.dependencies ?? {}));
  const supported = libraries.every((lib) => semver.satisfies(process.version, lib.pkg.engines?.node ?? '*'));
  const mentionsOwn = (line: string) =>
    (line.includes('@ddd-kit/') || ownDependencies.some((name) => line.includes(` ${name}@`))) &&
    (supported || !line.startsWith('npm warn EBADENGINE'));
  const lines = stderr.split('\n').filter((line) => /^npm warn/i.test(line));
  return lines.some(mentionsOwn) ? lines : [];
}

type Flavour = 'newest' | 'lowest';

/**
 * What a run checks. Every check, unless CI asks for less on a second Node.js line (see .ci/run):
 * `PACKAGING_FLAVOURS=newest` leaves out the project on the lowest peers (they meet the oldest
 * line in that line's run); `PACKAGING_TYPECHECK=0` compiles the consumer without type-checking it
 * (tsc --noCheck: its types do not depend on the Node.js that runs tsc, and the newest line's run
 * checks them). What runs, installs and boots is checked on every line either way.
 */
const FLAVOURS: readonly Flavour[] = process.env.PACKAGING_FLAVOURS === 'newest' ? ['newest'] : ['newest', 'lowest'];
const TYPECHECK = process.env.PACKAGING_TYPECHECK !== '0';

interface Project {
  flavour: Flavour;
  dir: string;
  /** What package.json asked for, by package. */
  requested: Record<string, string>;
  /** tsc's complaints about the consumer; it emits JavaScript whatever they are, for the checks that run it. */
  typeErrors: string;
  /** npm install's warnings that name a ddd-kit package (all its warnings, when one does). */
  warnings: string[];
}

const NPM_INSTALL = ['install', '--prefer-offline', '--no-audit', '--no-fund'];

/** A scratch project: the tarballs, every peer (newest in range, or the lowest version of the range), the consumer. */
async function createProject(base: string, flavour: Flavour): Promise<Project> {
  const dir = join(base, flavour);
  const requested: Record<string, string> = {};
  const tarballOf = (name: string) => libraries.find((lib) => lib.pkg.name === name)?.tarball;
  // newest: what the docs' install lines name, as they name it (an @ddd-kit package as its tarball).
  const documented = flavour === 'newest' ? documentedPackages(installLines()) : new Map<string, string | undefined>();
  for (const [name, spec] of documented) requested[name] = tarballOf(name) ?? spec ?? ''; // '': the name alone
  for (const lib of libraries) requested[lib.pkg.name] ??= lib.tarball!;
  for (const [name, range] of peerRanges()) {
    requested[name] ??= flavour === 'newest' ? range : semver.minVersion(range)!.version;
    const types = TYPES_OF[name];
    if (types) requested[types] ??= rootPkg.devDependencies![types];
  }
  // The consumer's types of Node, as the workspace has them. Its compiler is the workspace's own
  // TypeScript, run on the project (below): the same version a project would install, and the
  // largest package the install would otherwise unpack twice.
  requested['@types/node'] ??= rootPkg.devDependencies!['@types/node'];

  await cp(consumerDir, dir, { recursive: true, filter: (src) => !src.includes(`${consumerDir}/dist`) });
  // One install per project. Peer conflicts fail it (npm's default), as they would for a user.
  let installed: { stderr: string };
  if (flavour === 'newest') {
    // As a user types it: an empty project, then one `npm install <package>…`.
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'ddd-kit-consumer-newest', private: true, type: 'module' }),
    );
    const args = Object.entries(requested).map(([name, spec]) =>
      spec.startsWith('/') ? spec : spec === '' ? name : `${name}@${spec}`,
    );
    installed = await sh('npm', [...NPM_INSTALL, ...args], dir);
  } else {
    await writeFile(
      join(dir, 'package.json'),
      JSON.stringify(
        { name: `ddd-kit-consumer-${flavour}`, private: true, type: 'module', dependencies: requested },
        null,
        2,
      ),
    );
    installed = await sh('npm', NPM_INSTALL, dir);
  }
  // A second installed copy of @ddd-kit/core, as a user gets when two versions meet (core.memory.ts).
  await cp(join(dir, 'node_modules', '@ddd-kit', 'core'), join(dir, 'core-copy'), { recursive: true });
  const typeErrors = await sh(
    process.execPath,
    [
      join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      'tsconfig.json',
      ...(TYPECHECK ? [] : ['--noCheck']),
    ],
    dir,
  ).then(
    () => '',
    (err: Error) => err.message,
  );
  return { flavour, dir, requested, typeErrors, warnings: ownWarnings(installed.stderr) };
}

interface Newcomer {
  dir: string;
  warnings: string[];
}

/** test/packaging/newcomer with the tarballs of the root README's install line installed into it (one `npm install`), then built. */
async function createNewcomer(base: string): Promise<Newcomer> {
  const dir = join(base, 'newcomer');
  await cp(newcomerDir, dir, {
    recursive: true,
    filter: (src) => !/\/(node_modules|dist)(\/|$)/.test(src.slice(newcomerDir.length)),
  });
  const readmeLine = installLines().find((line) => line.file === 'README.md');
  if (!readmeLine) throw new Error('README.md has no `npm install` line');
  const args = readmeLine.packages.map(({ name, spec }) => {
    const lib = libraries.find((l) => l.pkg.name === name);
    return lib ? lib.tarball! : spec ? `${name}@${spec}` : name;
  });
  const installed = await sh('npm', [...NPM_INSTALL, ...args], dir);
  await sh('npm', ['run', 'build'], dir);
  return { dir, warnings: ownWarnings(installed.stderr) };
}

interface LockEntry {
  version?: string;
  resolved?: string;
  link?: boolean;
}

async function lockPackages(project: Project): Promise<Record<string, LockEntry>> {
  return (
    JSON.parse(await readFile(join(project.dir, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, LockEntry>;
    }
  ).packages;
}

/** Packages the memory check makes unimportable for `lib`: every optional driver or telemetry peer of every library, except what `lib` itself requires. */
function blockedFor(lib: Library): string[] {
  const required = new Set<string>();
  const visit = (pkg: PackageJson) => {
    for (const name of Object.keys(pkg.peerDependencies ?? {})) {
      if (pkg.peerDependenciesMeta?.[name]?.optional) continue;
      required.add(name);
      const own = libraries.find((l) => l.pkg.name === name);
      if (own) visit(own.pkg);
    }
  };
  visit(lib.pkg);
  const all = new Set([
    ...libraries
      .flatMap((l) => optionalPeers(l.pkg))
      .filter((name) => DRIVERS.has(name) || LOADED_WHEN_PRESENT.has(name)),
    ...Object.keys(FEATURE_PEERS),
  ]);
  return [...all].filter((name) => !required.has(name)).sort();
}

describe('packed libraries installed outside the workspace', () => {
  let base: string;
  const projects = new Map<Flavour, Project>();
  let newcomer: Newcomer | undefined;
  let setupError: Error | undefined;
  let newcomerError: Error | undefined;

  beforeAll(async () => {
    base = await mkdtemp(join(tmpdir(), 'ddd-kit-packaging-'));
    try {
      for (const lib of libraries) {
        if (!existsSync(join(root, 'libs', lib.dir, 'dist'))) {
          throw new Error(`libs/${lib.dir}/dist is missing: run \`npm run build\` first (npm test does)`);
        }
      }
      const packed = await sh(
        'npm',
        [
          'pack',
          '--json',
          '--pack-destination',
          base,
          ...libraries.flatMap((lib) => ['--workspace', `libs/${lib.dir}`]),
        ],
        root,
      );
      const results = JSON.parse(packed.stdout) as Array<{ name: string; filename: string }>;
      for (const lib of libraries) {
        const result = results.find((r) => r.name === lib.pkg.name);
        if (!result) throw new Error(`npm pack produced no tarball for ${lib.pkg.name}`);
        lib.tarball = join(base, result.filename);
      }
      // The three installs run side by side: they share nothing but npm's cache.
      const newcomerMade = createNewcomer(base).then(
        (made) => (newcomer = made),
        (err: Error) => (newcomerError = err),
      );
      const made = await Promise.all(FLAVOURS.map((flavour) => createProject(base, flavour)));
      for (const project of made) projects.set(project.flavour, project);
      await newcomerMade;
    } catch (err) {
      setupError = err as Error;
    }
  }, 600_000);

  afterAll(async () => {
    if (base) await rm(base, { recursive: true, force: true });
  });

  const project = (flavour: Flavour): Project => {
    if (setupError) throw setupError;
    const found = projects.get(flavour);
    if (!found) throw new Error(`the ${flavour} scratch project was not created`);
    return found;
  };

  it('has a consumer check for every library under libs/', () => {
    const files = new Set(readdirSync(consumerDir));
    const missing: string[] = [];
    for (const lib of libraries) {
      if (!files.has(`${lib.dir}.memory.ts`)) missing.push(`test/packaging/consumer/${lib.dir}.memory.ts`);
      if (optionalPeers(lib.pkg).some((name) => DRIVERS.has(name)) && !files.has(`${lib.dir}.drivers.ts`)) {
        missing.push(`test/packaging/consumer/${lib.dir}.drivers.ts`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('declares what each library imports at run time as a dependency or a peer, and drivers as optional peers', () => {
    const problems: string[] = [];
    for (const lib of libraries) {
      const declared = new Set([
        ...Object.keys(lib.pkg.dependencies ?? {}),
        ...Object.keys(lib.pkg.peerDependencies ?? {}),
      ]);
      for (const [name, files] of importedPackages(join(root, 'libs', lib.dir, 'dist'))) {
        const feature = FEATURE_PEERS[name];
        if (feature) {
          const outside = files.filter((file) => !file.startsWith(`${feature.entry}/`));
          if (outside.length > 0)
            problems.push(
              `${lib.pkg.name} imports '${name}' outside its /${feature.entry} entry: ${outside.join(', ')}`,
            );
          if (declared.has(name))
            problems.push(
              `${lib.pkg.name} declares '${name}', which only its /${feature.entry} entry needs (docs/versions.md)`,
            );
        } else if (!declared.has(name))
          problems.push(`${lib.pkg.name} imports '${name}' but declares it neither as a dependency nor as a peer`);
      }
      for (const driver of DRIVERS) {
        if (lib.pkg.dependencies?.[driver])
          problems.push(`${lib.pkg.name}: '${driver}' must be an optional peer, not a dependency`);
        if (lib.pkg.peerDependencies?.[driver] && !lib.pkg.peerDependenciesMeta?.[driver]?.optional) {
          problems.push(`${lib.pkg.name}: the peer '${driver}' must be optional`);
        }
      }
      for (const own of ownNames) {
        // @ddd-kit/core is a plain dependency (npm brings it, as pg brings pg-pool): its
        // process-wide state lives on globalThis, so two installed copies still agree (core.memory.ts).
        if (own === CORE && lib.pkg.name !== CORE && lib.pkg.dependencies?.[own] !== corePkg.version)
          problems.push(`${lib.pkg.name}: '${own}' must be a dependency at ${corePkg.version}`);
        if (own !== CORE && lib.pkg.dependencies?.[own])
          problems.push(
            `${lib.pkg.name}: '${own}' must be a peer (one copy shares its DI tokens and decorator metadata)`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it('states the range of what a subpath entry needs in docs/versions.md, as the test installs it', () => {
    const versions = readFileSync(join(root, 'docs', 'versions.md'), 'utf8');
    for (const [name, { range }] of Object.entries(FEATURE_PEERS)) {
      const row = versions.split('\n').find((line) => line.startsWith(`| \`${name}\``));
      expect({ name, row: row?.split('|')[2]?.trim() }).toEqual({ name, row: `\`${range}\`` });
    }
  });

  it('has install lines in the docs that name every @ddd-kit package they need, and @types/pg beside pg', () => {
    const problems: string[] = [];
    for (const line of installLines()) {
      const named = new Set(line.packages.map(({ name }) => name));
      const needs = (pkg: PackageJson) => {
        for (const name of [
          ...Object.keys(pkg.dependencies ?? {}),
          ...Object.keys(pkg.peerDependencies ?? {}).filter((peer) => !pkg.peerDependenciesMeta?.[peer]?.optional),
        ]) {
          const own = libraries.find((lib) => lib.pkg.name === name);
          if (!own) continue;
          // Not on the registry yet: npm finds an @ddd-kit package only where the line names it.
          if (!named.has(name)) problems.push(`${line.file}: \`${line.command}\` needs ${name} (for ${pkg.name})`);
          needs(own.pkg);
        }
      };
      for (const { name } of line.packages) {
        const own = libraries.find((lib) => lib.pkg.name === name);
        if (own) needs(own.pkg);
        const types = TYPES_OF[name];
        // A strict TypeScript project fails on an untyped import (TS7016).
        if (types && !named.has(types))
          problems.push(`${line.file}: \`${line.command}\` names ${name} without ${types}`);
      }
    }
    expect(problems).toEqual([]);
    expect(() => documentedPackages(installLines())).not.toThrow();
  });

  describe('a project made by `nest new` (@nestjs/cli 12), with the README install line', () => {
    const made = (): Newcomer => {
      if (setupError) throw setupError;
      if (newcomerError) throw newcomerError;
      if (!newcomer) throw new Error('the newcomer project was not created');
      return newcomer;
    };

    it('installs with no npm warning about a ddd-kit package', () => {
      expect(made().warnings).toEqual([]);
    });

    it('starts, and its first look answers: a name once, then 409', async () => {
      const { dir } = made();
      const port = await freePort();
      const child = spawn(process.execPath, [join('dist', 'main.js')], {
        cwd: dir,
        env: cleanEnv({ PORT: String(port) }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = once(child, 'exit');
      try {
        const register = () => fetch(`http://127.0.0.1:${port}/users/alice`, { method: 'POST' });
        const first = await waitFor('the newcomer app to answer', async () => {
          if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output}`);
          return register().catch(() => undefined);
        });
        expect({ status: first.status, body: (await first.json()) as unknown }).toEqual({
          status: 201,
          body: { id: expect.any(String) },
        });
        const second = await register();
        expect({ status: second.status, body: (await second.json()) as unknown }).toMatchObject({
          status: 409,
          body: { message: "username 'alice' is taken" },
        });
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    }, 120_000);

    it('passes its own e2e test (Vitest)', async () => {
      const { stdout } = await sh('npm', ['run', 'test:e2e'], made().dir);
      expect(stdout).toMatch(/Tests\s+.*1 passed/);
    }, 180_000);
  });

  describe.each(FLAVOURS)('with the %s versions the peer ranges allow', (flavour) => {
    it('installs with no npm warning about a ddd-kit package', () => {
      expect(project(flavour).warnings).toEqual([]);
    });

    it('installed every library from its tarball, with no workspace link, and each peer at the version asked for', async () => {
      const { requested } = project(flavour);
      const packages = await lockPackages(project(flavour));
      for (const lib of libraries) {
        const entry = packages[`node_modules/${lib.pkg.name}`];
        expect({ name: lib.pkg.name, resolved: entry?.resolved, link: entry?.link }).toEqual({
          name: lib.pkg.name,
          resolved: expect.stringMatching(/^file:.*\.tgz$/),
          link: undefined,
        });
      }
      expect(Object.entries(packages).filter(([, entry]) => entry.link)).toEqual([]);
      for (const [name, range] of peerRanges()) {
        const installed = packages[`node_modules/${name}`]?.version;
        expect({ name, installed, inRange: installed !== undefined && semver.satisfies(installed, range) }).toEqual({
          name,
          installed: flavour === 'lowest' ? requested[name] : expect.any(String),
          inRange: true,
        });
      }
    });

    it(`${TYPECHECK ? 'type-checks and compiles' : 'compiles (--noCheck)'} the TypeScript consumer under module/moduleResolution nodenext`, async () => {
      const { dir, typeErrors } = project(flavour);
      expect(typeErrors).toBe('');
      expect(existsSync(join(dir, 'dist', 'main.js'))).toBe(true);
    });

    it.each(libraries.map((lib) => [lib.dir, lib] as const))(
      'boots %s in a Nest application on its memory backend with no driver importable',
      async (_dir, lib) => {
        const { dir } = project(flavour);
        const blocked = blockedFor(lib);
        const { stdout } = await sh(
          process.execPath,
          ['--import', './block-drivers.mjs', join('dist', 'main.js'), 'memory', lib.dir],
          dir,
          cleanEnv({ DDD_KIT_BLOCKED: blocked.join(',') }),
          120_000,
        );
        expect(stdout).toContain(`ok ${lib.dir} memory`);
      },
      180_000,
    );

    it('boots the /health entries (@nestjs/terminus indicators) of the libraries that have one', async () => {
      const { dir } = project(flavour);
      const { stdout } = await sh(
        process.execPath,
        [join('dist', 'main.js'), 'memory', 'health'],
        dir,
        cleanEnv(),
        120_000,
      );
      expect(stdout).toContain('ok health memory');
    }, 180_000);

    const withDrivers = libraries.filter((lib) => optionalPeers(lib.pkg).some((name) => DRIVERS.has(name)));
    it.each(withDrivers.map((lib) => [lib.dir, lib] as const))(
      'runs %s on its drivers against the real servers',
      async (_dir, lib) => {
        const { dir } = project(flavour);
        const { stdout } = await sh(
          process.execPath,
          [join('dist', 'main.js'), 'drivers', lib.dir],
          dir,
          cleanEnv({ REDIS_URL: redisUrl(), MONGODB_URI: mongoUri(), DATABASE_URL: postgresUrl() }),
          120_000,
        );
        expect(stdout).toContain(`ok ${lib.dir} drivers`);
      },
      180_000,
    );
  });
});

/** Bare package names that the built JavaScript of a library imports (statically or with `import()`), with the files (relative to dist) that do. */
function importedPackages(distDir: string): Map<string, string[]> {
  const names = new Map<string, string[]>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js')) {
        const code = readFileSync(path, 'utf8');
        for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"./][^'"]*)['"]/g)) {
          const specifier = match[1];
          if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0])) continue;
          const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
          names.set(name, [...(names.get(name) ?? []), relative(distDir, path)]);
        }
      }
    }
  };
  walk(distDir);
  return names;
}
