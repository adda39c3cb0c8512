#!/usr/bin/env node
// Run after `tsc` in a library's folder (its build script): in the emitted declarations, every
// import of an OPTIONAL peer (ioredis, mongoose, pg, …: peerDependenciesMeta optional) gets a
// `// @ts-ignore` line before it. A user who installed the driver keeps its exact types; one who
// did not (a PostgreSQL-only app has no mongoose) is not refused by a type-check of the library's
// declarations (`skipLibCheck: false`): the driver's types are then `any`, and nothing of it is
// loaded at run time. TypeScript keeps no comment on an import in its declaration output, so
// this cannot be written in the sources.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MARK = '// @ts-ignore optional peer: without it installed, its types are `any`';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const optional = Object.entries(pkg.peerDependenciesMeta ?? {})
  .filter(([, meta]) => meta?.optional === true)
  .map(([name]) => name);
if (optional.length === 0) process.exit(0);

const escaped = optional.map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
const specifier = new RegExp(`(?:from |import\\()['"](?:${escaped.join('|')})(?:/[^'"]*)?['"]`);

function* declarations(dir) {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* declarations(path);
    else if (path.endsWith('.d.ts')) yield path;
  }
}

let marked = 0;
for (const file of declarations('dist')) {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out = [];
  for (const [i, line] of lines.entries()) {
    if (specifier.test(line) && lines[i - 1] !== MARK) {
      out.push(MARK);
      marked++;
    }
    out.push(line);
  }
  if (out.length !== lines.length) writeFileSync(file, out.join('\n'));
}
console.log(`${pkg.name}: ${marked} import(s) of optional peers marked in dist/**/*.d.ts`);
