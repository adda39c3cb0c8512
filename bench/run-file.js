// One bench file in a process of its own (bench/run.js forks one per file): what a file leaves
// behind (async hooks that an AsyncLocalStorage switched on, a heap grown large, code optimised
// for another file's shapes) then never weighs on the rows of the next. The rows go back to
// run.js over the IPC channel.
import { pathToFileURL } from 'node:url';

const [file] = process.argv.slice(2);
try {
  const mod = await import(pathToFileURL(file).href);
  const rows = await mod.default({ log: (...a) => console.log('  ', ...a) });
  process.send({ rows }, () => process.exit(0));
} catch (error) {
  process.send({ error: String(error?.stack ?? error) }, () => process.exit(1));
}
