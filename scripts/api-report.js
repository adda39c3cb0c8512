#!/usr/bin/env node
// The public surface of every @ddd-kit package, entry by entry, as API Extractor reports it:
// one `libs/<lib>/etc/<lib>[-<subpath>].api.md` per entry of the library's package.json
// `exports`, read from the built declarations (run `npm run build` first; the npm scripts do).
//
//   node scripts/api-report.js            check: fails when an entry's surface differs from its
//                                         committed report (or a report is missing or left over)
//   node scripts/api-report.js --update   writes the reports (`npm run api:update`)
//
// It also fails, in both modes, when the surface breaks a rule of its own:
//   - a main entry (`@ddd-kit/<lib>`) exports more than MAX_MAIN_NAMES names;
//   - a name is exported by two entries, `@ddd-kit/core/internal` aside (where the other packages
//     take what they re-export) and the names listed in SHARED_NAMES.
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const require = createRequire(import.meta.url);
const { Extractor, ExtractorConfig } = require('@microsoft/api-extractor');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const update = process.argv.includes('--update');

const MAX_MAIN_NAMES = 50;
/** Entries that serve the other @ddd-kit packages only: left out of the duplicate-name rule. */
const INTERNAL_ENTRIES = new Set(['@ddd-kit/core/internal']);
/** Names more than one entry exports on purpose, with those entries. */
const SHARED_NAMES = {
  // SPEC §2 places @Aggregate in the ID package; aggregates are declared with the repository.
  Aggregate: ['@ddd-kit/id-generator', '@ddd-kit/repository'],
};

/** Every entry of every library: its name, the library's folder, its declarations and its report. */
function entries() {
  const found = [];
  for (const dir of readdirSync(join(root, 'libs')).sort()) {
    const pkgPath = join(root, 'libs', dir, 'package.json');
    if (!existsSync(pkgPath)) continue;
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
      const types = typeof target === 'string' ? target : target.types;
      if (typeof types !== 'string') throw new Error(`${pkg.name}: the export '${subpath}' names no types`);
      const sub = subpath === '.' ? '' : subpath.slice(2);
      found.push({
        name: sub === '' ? pkg.name : `${pkg.name}/${sub}`,
        dir,
        libDir: join(root, 'libs', dir),
        types: types.replace(/^\.\//, ''),
        report: join(root, 'libs', dir, 'etc', `${dir}${sub === '' ? '' : `-${sub.replaceAll('/', '-')}`}.api.md`),
      });
    }
  }
  return found;
}

/** The report API Extractor writes for one entry, its title naming the entry. */
function extract(entry, tempDir) {
  const dts = join(entry.libDir, entry.types);
  if (!existsSync(dts)) throw new Error(`${relative(root, dts)} is missing: run \`npm run build\` first`);
  const reportFileName = `${entry.name.replace(/^@ddd-kit\//, '').replaceAll('/', '-')}.api.md`;
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: entry.libDir,
      mainEntryPointFilePath: `<projectFolder>/${entry.types}`,
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            lib: ['ES2023', 'ES2024.String'],
            types: ['node'],
            strict: true,
            experimentalDecorators: true,
            skipLibCheck: true,
          },
          files: [dts],
        },
      },
      apiReport: { enabled: true, reportFileName, reportFolder: tempDir, reportTempFolder: join(tempDir, 'temp') },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        // A declaration file that does not compile fails the check; API Extractor's advice on
        // doc comments and release tags is not what this report is for.
        compilerMessageReporting: { default: { logLevel: 'error' } },
        extractorMessageReporting: { default: { logLevel: 'none' } },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
    configObjectFullPath: join(entry.libDir, 'api-extractor.json'),
    packageJsonFullPath: join(entry.libDir, 'package.json'),
  });
  const result = Extractor.invoke(config, {
    localBuild: true,
    messageCallback: (message) => {
      // "The API report file was missing, so a new file was created": always, in a fresh temp folder.
      if (message.messageId === 'console-api-report-created') message.handled = true;
      if (message.messageId === 'console-preamble' || message.messageId === 'console-compiler-version-notice')
        message.handled = true;
    },
  });
  if (!result.succeeded) throw new Error(`API Extractor failed on ${entry.name} (${result.errorCount} errors)`);
  const text = readFileSync(join(tempDir, reportFileName), 'utf8');
  const [first, ...rest] = text.split('\n');
  if (!first.startsWith('## API Report File for ')) throw new Error(`${entry.name}: unexpected report title ${first}`);
  return [`## API Report File for "${entry.name}"`, ...rest].join('\n');
}

/** The names each entry exports, from its declarations. */
function exportedNames(all) {
  const program = ts.createProgram(
    all.map((entry) => join(entry.libDir, entry.types)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      noEmit: true,
    },
  );
  const checker = program.getTypeChecker();
  const names = new Map();
  for (const entry of all) {
    const source = program.getSourceFile(join(entry.libDir, entry.types));
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`${entry.name}: cannot read ${entry.types}`);
    names.set(
      entry.name,
      checker
        .getExportsOfModule(symbol)
        .map((s) => s.name)
        .sort(),
    );
  }
  return names;
}

function surfaceProblems(all, names) {
  const problems = [];
  const where = new Map();
  for (const entry of all) {
    const list = names.get(entry.name);
    const isMain = !entry.name.slice('@ddd-kit/'.length).includes('/');
    if (isMain && list.length > MAX_MAIN_NAMES)
      problems.push(`${entry.name} exports ${list.length} names (at most ${MAX_MAIN_NAMES} in a main entry)`);
    if (INTERNAL_ENTRIES.has(entry.name)) continue;
    for (const name of list) where.set(name, [...(where.get(name) ?? []), entry.name]);
  }
  for (const [name, from] of where) {
    if (from.length < 2) continue;
    const allowed = SHARED_NAMES[name];
    if (!allowed || from.some((entry) => !allowed.includes(entry)))
      problems.push(`${name} is exported by ${from.join(', ')}: one entry per name`);
  }
  return problems;
}

/** The lines only one side has ("-" the committed report, "+" the surface now), at most 40. */
function lineDiff(before, after) {
  const count = (text) => {
    const counts = new Map();
    for (const line of text.split('\n')) counts.set(line, (counts.get(line) ?? 0) + 1);
    return counts;
  };
  const [was, now] = [count(before), count(after)];
  const lines = [
    ...before
      .split('\n')
      .filter((line) => (now.get(line) ?? 0) < was.get(line) && line.trim() !== '')
      .map((l) => `    - ${l}`),
    ...after
      .split('\n')
      .filter((line) => (was.get(line) ?? 0) < now.get(line) && line.trim() !== '')
      .map((l) => `    + ${l}`),
  ];
  return [...new Set(lines)].slice(0, 40).join('\n');
}

const all = entries();
const tempDir = mkdtempSync(join(tmpdir(), 'ddd-kit-api-'));
const stale = [];
try {
  const names = exportedNames(all);
  for (const entry of all) {
    const report = extract(entry, tempDir);
    const committed = existsSync(entry.report) ? readFileSync(entry.report, 'utf8') : undefined;
    const file = relative(root, entry.report);
    console.log(`${String(names.get(entry.name).length).padStart(4)} names  ${entry.name}  (${file})`);
    if (committed === report) continue;
    if (update) {
      mkdirSync(dirname(entry.report), { recursive: true });
      writeFileSync(entry.report, report);
      console.log(`       written: ${file}`);
    } else if (committed === undefined) stale.push(`${file}: missing`);
    else stale.push(`${file}: differs from ${entry.name}'s surface\n${lineDiff(committed, report)}`);
  }
  // A report whose entry is gone.
  const expected = new Set(all.map((entry) => entry.report));
  for (const dir of new Set(all.map((entry) => entry.libDir))) {
    const etc = join(dir, 'etc');
    if (!existsSync(etc)) continue;
    for (const file of readdirSync(etc).filter((f) => f.endsWith('.api.md'))) {
      if (expected.has(join(etc, file))) continue;
      if (update) {
        rmSync(join(etc, file));
        console.log(`       removed: ${relative(root, join(etc, file))}`);
      } else stale.push(`${relative(root, join(etc, file))}: no entry has this report`);
    }
  }
  const problems = surfaceProblems(all, names);
  if (stale.length > 0) {
    console.error(
      `\nThe public surface changed without its API report:\n  ${stale.join('\n  ')}\n` +
        'If the change is meant, run `npm run api:update` and commit libs/*/etc/*.api.md with it.',
    );
  }
  if (problems.length > 0) console.error(`\nThe public surface breaks its rules:\n  ${problems.join('\n  ')}`);
  if (stale.length > 0 || problems.length > 0) process.exitCode = 1;
  else console.log(update ? '\nAPI reports written.' : '\nAPI reports match the surface.');
} finally {
  rmSync(tempDir, { recursive: true, force: true });
}
