// Every TypeScript block of the docs compiles. Each ```ts block of README.md, libs/*/README.md,
// apps/*/README.md and every Markdown file under docs/ and libs/*/docs/ is written as a module
// of its own to a scratch directory, where `@ddd-kit/*` resolves to the workspace sources
// (tsconfig paths) and every other package to the workspace's node_modules, and `tsc --noEmit`
// checks them all at once under the settings a Nest user compiles with (strict, nodenext,
// decorators).
//
// A block may name its file (```ts file=registration.ts); later blocks of the same Markdown file
// then import from it ('./registration.js') as a reader's own files would. A block that is
// deliberately not a whole module is written ```ts fragment, with the reason in an HTML comment
// on the line above it: <!-- fragment: why it cannot compile on its own -->.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { workspaceEntries } from '../../scripts/workspace-entries.js';
import { markdownFiles, root } from './markdown-files.js';

export interface Snippet {
  readme: string; // the Markdown file, relative to the repository root
  index: number; // 1-based, among the file's TypeScript blocks
  line: number; // the line of the opening fence
  code: string;
  file?: string; // from file=<name>.ts in the info string
  fragment: boolean;
  reason?: string; // why a fragment cannot compile, from <!-- fragment: … -->
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*(\S*)(.*)$/;
const TS_LANGS = new Set(['ts', 'typescript']);

/** The TypeScript blocks of one README, in order. */
export function extractSnippets(readme: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const snippets: Snippet[] = [];
  let index = 0;
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[end])) end++;
    if (TS_LANGS.has(lang.toLowerCase())) {
      index++;
      const words = rest.split(/\s+/);
      const fragment = words.includes('fragment');
      const file = words.find((w) => w.startsWith('file='))?.slice('file='.length);
      const reason = /<!--\s*fragment:\s*(.*?)\s*-->/.exec(lines[i - 1] ?? '')?.[1];
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
        .join('\n');
      snippets.push({
        readme,
        index,
        line: i + 1,
        code,
        ...(file ? { file } : {}),
        fragment,
        reason: reason || undefined,
      });
    }
    i = end;
  }
  return snippets;
}

/** `@ddd-kit/<lib>` and its other entry points (package.json "exports") mapped to the library's sources. */
function workspacePaths(): Record<string, string[]> {
  return Object.fromEntries(workspaceEntries(root).map(({ specifier, source }) => [specifier, [source]]));
}

interface Diagnostic {
  file: string;
  line: number;
  column: number;
  message: string;
}

function parseDiagnostics(output: string): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const raw of output.split('\n')) {
    const match = /^(.+?)\((\d+),(\d+)\): (error TS\d+: .*)$/.exec(raw);
    if (match)
      diagnostics.push({ file: match[1], line: Number(match[2]), column: Number(match[3]), message: match[4] });
    else if (raw.startsWith(' ') && diagnostics.length > 0) diagnostics[diagnostics.length - 1].message += `\n${raw}`;
    else if (raw.trim() !== '') diagnostics.push({ file: '', line: 0, column: 0, message: raw });
  }
  return diagnostics;
}

/** Each Markdown file's blocks live in a directory of their own, so that file names only need to be unique within one file. */
const fileOf = (s: Snippet) =>
  `${s.readme.replace(/[^A-Za-z0-9]+/g, '_')}/${s.file ?? `block${String(s.index).padStart(2, '0')}.ts`}`;

describe('TypeScript blocks of the docs', () => {
  const snippets = markdownFiles().flatMap((readme) =>
    extractSnippets(readme, readFileSync(join(root, readme), 'utf8')),
  );
  let scratch: string;
  let diagnostics: Diagnostic[] = [];

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'ddd-kit-readme-'));
    // Every package but @ddd-kit/* from the workspace, as a user's project would have it installed.
    await symlink(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ type: 'module' }));
    await writeFile(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        // The workspace's own compiler settings (strict, NodeNext, decorators, its lib), which
        // the library sources the blocks import are written for.
        extends: join(root, 'tsconfig.base.json'),
        compilerOptions: {
          moduleDetection: 'force', // a block without import or export is still a module of its own
          noEmit: true,
          declaration: false,
          sourceMap: false,
          types: ['node'],
          paths: workspacePaths(),
        },
        files: snippets.filter((s) => !s.fragment).map(fileOf),
      }),
    );
    const written = new Map<string, Snippet>();
    for (const snippet of snippets) {
      const file = fileOf(snippet);
      const clash = written.get(file);
      if (clash)
        throw new Error(`${snippet.readme}: blocks ${clash.index} and ${snippet.index} are both named ${snippet.file}`);
      written.set(file, snippet);
      await mkdir(dirname(join(scratch, file)), { recursive: true });
      await writeFile(join(scratch, file), snippet.code);
    }
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await promisify(execFile)(process.execPath, [tsc, '-p', scratch, '--pretty', 'false'], {
      cwd: scratch,
      maxBuffer: 16 << 20,
    }).then(
      ({ stdout }) => stdout,
      (err: { stdout?: string; stderr?: string; message: string }) =>
        err.stdout || err.stderr ? `${err.stdout ?? ''}${err.stderr ?? ''}` : err.message,
    );
    diagnostics = parseDiagnostics(output);
  }, 300_000);

  afterAll(async () => {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  it('reads blocks as a Markdown reader does: ts and typescript fences, indented ones, fragments with their reason', () => {
    const text = [
      '# t',
      '```ts',
      'const a = 1;',
      '```',
      '```sh',
      'echo no',
      '```',
      '- item',
      '  ```typescript',
      '  const b = 2;',
      '  ```',
      '<!-- fragment: a signature -->',
      '```ts fragment',
      'f(x)',
      '```',
      '````ts',
      '```',
      '````',
      '```ts file=user.ts',
      'export class User {}',
      '```',
    ].join('\n');
    expect(extractSnippets('R.md', text)).toEqual([
      { readme: 'R.md', index: 1, line: 2, code: 'const a = 1;', fragment: false, reason: undefined },
      { readme: 'R.md', index: 2, line: 9, code: 'const b = 2;', fragment: false, reason: undefined },
      { readme: 'R.md', index: 3, line: 13, code: 'f(x)', fragment: true, reason: 'a signature' },
      { readme: 'R.md', index: 4, line: 16, code: '```', fragment: false, reason: undefined },
      {
        readme: 'R.md',
        index: 5,
        line: 19,
        code: 'export class User {}',
        file: 'user.ts',
        fragment: false,
        reason: undefined,
      },
    ]);
    expect(snippets.filter((s) => s.readme === 'README.md').length).toBeGreaterThan(0);
  });

  it('reads the docs folders too: docs/ and libs/*/docs/', () => {
    const files = markdownFiles();
    expect(files.filter((f) => f.startsWith('docs/')).length).toBeGreaterThan(0);
    expect(files.filter((f) => /^libs\/[^/]+\/docs\//.test(f)).length).toBeGreaterThan(0);
  });

  it('skips a block only when it is marked as a fragment with a reason', () => {
    const unexplained = snippets
      .filter((s) => s.fragment && !s.reason)
      .map(
        (s) =>
          `${s.readme} block ${s.index} (line ${s.line}) is marked fragment without <!-- fragment: reason --> on the line above`,
      );
    expect(unexplained).toEqual([]);
  });

  it('type-checks every block that is not a fragment', () => {
    const byFile = new Map(snippets.map((s) => [fileOf(s), s]));
    const problems = diagnostics.map((d) => {
      const snippet = byFile.get(relative(scratch, join(scratch, d.file)));
      if (!snippet) return `${d.file ? `${d.file}(${d.line},${d.column}): ` : ''}${d.message}`;
      const source = snippet.code.split('\n')[d.line - 1] ?? '';
      return `${snippet.readme} block ${snippet.index} (the \`\`\`ts at line ${snippet.line}), line ${snippet.line + d.line}:${d.column}: ${d.message}\n    ${source.trim()}`;
    });
    if (problems.length > 0)
      throw new Error(`TypeScript in the docs that does not compile:\n\n${problems.join('\n\n')}`);
    expect(problems).toEqual([]);
  });
});
