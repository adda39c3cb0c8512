// Packages that install: each library under libs/ is packed with `npm pack` and installed from
// its tarball into scratch projects in the OS temp directory (outside the workspace: no
// workspace links, nothing resolved from the repository's node_modules), once with the newest
// versions its peer ranges allow and once with the lowest. In each project a TypeScript
// consumer (test/packaging/consumer) type-checks under `nodenext`, then runs: every library
// boots in a Nest application on its memory backend with the optional drivers made
// unimportable, and every library with optional drivers does a round trip on the real servers.
//
// A library added under libs/ is packed and installed too, and the test fails until it has a
// consumer check (`<dir>.memory.ts`, and `<dir>.drivers.ts` when it has optional driver peers).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import semver from 'semver';
import { mongoUri, postgresUrl, redisUrl } from '../support/servers.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const consumerDir = join(root, 'test', 'packaging', 'consumer');
const run = promisify(execFile);

interface PackageJson {
  name: string;
  version: string;
  private?: boolean;
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
 * Optional peers of an optional feature behind a subpath export (`/health` needs
 * @nestjs/terminus): the main entry must boot without them, so the memory check blocks them too.
 */
const FEATURE_PEERS = new Set(['@nestjs/terminus']);

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

type Flavour = 'newest' | 'lowest';

interface Project {
  flavour: Flavour;
  dir: string;
  /** What package.json asked for, by package. */
  requested: Record<string, string>;
  /** tsc's complaints about the consumer; it emits JavaScript whatever they are, for the checks that run it. */
  typeErrors: string;
}

/** A scratch project: the tarballs, every peer (newest in range, or the lowest version of the range), the consumer. */
async function createProject(base: string, flavour: Flavour): Promise<Project> {
  const dir = join(base, flavour);
  const requested: Record<string, string> = {};
  for (const lib of libraries) requested[lib.pkg.name] = `file:${lib.tarball}`;
  for (const [name, range] of peerRanges()) {
    requested[name] = flavour === 'newest' ? range : semver.minVersion(range)!.version;
    const types = TYPES_OF[name];
    if (types) requested[types] = rootPkg.devDependencies![types];
  }
  // The consumer's types of Node, as the workspace has them. Its compiler is the workspace's own
  // TypeScript, run on the project (below): the same version a project would install, and the
  // largest package the install would otherwise unpack twice.
  requested['@types/node'] = rootPkg.devDependencies!['@types/node'];

  await cp(consumerDir, dir, { recursive: true, filter: (src) => !src.includes(`${consumerDir}/dist`) });
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify(
      { name: `ddd-kit-consumer-${flavour}`, private: true, type: 'module', dependencies: requested },
      null,
      2,
    ),
  );
  // One install per project. Peer conflicts fail it (npm's default), as they would for a user.
  await sh('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], dir);
  // A second installed copy of @ddd-kit/core, as a user gets when two versions meet (core.memory.ts).
  await cp(join(dir, 'node_modules', '@ddd-kit', 'core'), join(dir, 'core-copy'), { recursive: true });
  const typeErrors = await sh(
    process.execPath,
    [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'],
    dir,
  ).then(
    () => '',
    (err: Error) => err.message,
  );
  return { flavour, dir, requested, typeErrors };
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
  const all = new Set(
    libraries
      .flatMap((l) => optionalPeers(l.pkg))
      .filter((name) => DRIVERS.has(name) || LOADED_WHEN_PRESENT.has(name) || FEATURE_PEERS.has(name)),
  );
  return [...all].filter((name) => !required.has(name)).sort();
}

describe('packed libraries installed outside the workspace', () => {
  let base: string;
  const projects = new Map<Flavour, Project>();
  let setupError: Error | undefined;

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
      // The two installs run side by side: they share nothing but npm's cache.
      const made = await Promise.all((['newest', 'lowest'] as const).map((flavour) => createProject(base, flavour)));
      for (const project of made) projects.set(project.flavour, project);
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
      for (const name of importedPackages(join(root, 'libs', lib.dir, 'dist'))) {
        if (!declared.has(name))
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

  describe.each(['newest', 'lowest'] as const)('with the %s versions the peer ranges allow', (flavour) => {
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

    it('type-checks and compiles the TypeScript consumer under module/moduleResolution nodenext', async () => {
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

/** Bare package names that the built JavaScript of a library imports (statically or with `import()`). */
function importedPackages(distDir: string): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js')) {
        const code = readFileSync(path, 'utf8');
        for (const match of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"]([^'"./][^'"]*)['"]/g)) {
          const specifier = match[1];
          if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0])) continue;
          names.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]);
        }
      }
    }
  };
  walk(distDir);
  return names;
}
