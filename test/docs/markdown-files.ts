// The Markdown files the docs tests read: the root README, each library's and app's README, and
// every Markdown file under docs/ and libs/*/docs/.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Every checked Markdown file, relative to the repository root, in a stable order. */
export function markdownFiles(): string[] {
  const found = ['README.md'];
  for (const group of ['libs', 'apps']) {
    for (const entry of readdirSync(join(root, group), { withFileTypes: true })) {
      if (entry.isDirectory() && existsSync(join(root, group, entry.name, 'README.md')))
        found.push(`${group}/${entry.name}/README.md`);
    }
  }
  const docDirs = [
    'docs',
    ...readdirSync(join(root, 'libs'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `libs/${entry.name}/docs`),
  ];
  for (const dir of docDirs) found.push(...markdownUnder(dir));
  return found;
}

/** The Markdown files under `dir` (relative to the root), sorted; none when it does not exist. */
function markdownUnder(dir: string): string[] {
  if (!existsSync(join(root, dir))) return [];
  return readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap((entry) => {
      if (entry.isDirectory()) return markdownUnder(`${dir}/${entry.name}`);
      return entry.name.endsWith('.md') ? [`${dir}/${entry.name}`] : [];
    })
    .sort();
}
