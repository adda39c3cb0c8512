// The docs hold together: every relative link of every checked Markdown file names a file that
// exists, and every `#anchor` a heading of its target (GitHub's heading ids). And the root
// README stays a landing page: short, with install and a first look on its first screen.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { markdownFiles, root } from './markdown-files.js';

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to dashes. */
export function headingId(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The ids of a Markdown text's headings, outside code blocks; repeats get -1, -2… as on GitHub. */
export function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  let fence: string | undefined;
  for (const line of text.split('\n')) {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (open && (fence === undefined || open.startsWith(fence))) {
      fence = fence === undefined ? open : undefined;
      continue;
    }
    if (fence !== undefined) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const id = headingId(heading);
    const n = seen.get(id) ?? 0;
    seen.set(id, n + 1);
    ids.add(n === 0 ? id : `${id}-${n}`);
  }
  return ids;
}

/** The relative links of a Markdown text (outside code), with their line numbers. */
export function relativeLinks(text: string): Array<{ target: string; line: number }> {
  const links: Array<{ target: string; line: number }> = [];
  let fence: string | undefined;
  text.split('\n').forEach((line, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (open && (fence === undefined || open.startsWith(fence))) {
      fence = fence === undefined ? open : undefined;
      return;
    }
    if (fence !== undefined) return;
    const prose = line.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1];
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ target, line: i + 1 });
    }
  });
  return links;
}

describe('Markdown links', () => {
  const files = markdownFiles();

  it('reads headings and links as GitHub does', () => {
    const text = ['# A `code` heading: (with) punctuation', '## Faults', '## Faults', '```', '# not a heading', '```'];
    expect([...headingIds(text.join('\n'))]).toEqual(['a-code-heading-with-punctuation', 'faults', 'faults-1']);
    expect(relativeLinks('[a](docs/x.md#y) `[b](no.md)` [c](https://example.org) [d](#z "title")')).toEqual([
      { target: 'docs/x.md#y', line: 1 },
      { target: '#z', line: 1 },
    ]);
  });

  it('every relative link names an existing file, and every anchor a heading of it', () => {
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const { target, line } of relativeLinks(text)) {
        const [path, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = path === '' ? join(root, file) : normalize(join(root, dirname(file), decodeURI(path)));
        if (!existsSync(resolved)) {
          broken.push(`${file}:${line}: ${target} (no such file)`);
          continue;
        }
        if (anchor === undefined || anchor === '' || statSync(resolved).isDirectory()) continue;
        if (!resolved.endsWith('.md')) continue;
        if (!headingIds(readFileSync(resolved, 'utf8')).has(anchor))
          broken.push(`${file}:${line}: ${target} (no heading with that id)`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the root README', () => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n');

  it('is a landing page of at most 150 lines', () => {
    expect(lines.length).toBeLessThanOrEqual(150);
  });

  it('shows how to install and a first look on its first screen (40 lines)', () => {
    const firstScreen = lines.slice(0, 40).join('\n');
    expect(firstScreen).toMatch(/npm install @ddd-kit\//);
    expect(firstScreen).toMatch(/^```ts\b/m);
  });
});
