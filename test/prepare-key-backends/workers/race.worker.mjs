// One application instance racing for keys: `callers` concurrent callers walk the same key
// list in the same order as every other worker, each taking the next key not yet tried here,
// so the processes collide on each key at about the same moment. Key i lives in key space
// (PrepareKey name) `${name}-${i % names}`.
import { nextMessage, openBackend } from './backend.mjs';

const { backend, scope, name, names, keys, callers, worker } = JSON.parse(process.argv[2]);
const { factory, close } = await openBackend(backend, scope);
const spaces = Array.from({ length: names }, (_, n) => factory.create(`${name}-${n}`));
await Promise.all(spaces.map((pk) => pk.get('warm-up'))); // connect (and load the scripts) before the start signal
process.send({ type: 'ready' });
// Every worker starts at the same wall-clock moment, closer together than IPC delivery would.
const { at } = await nextMessage('go');
await new Promise((resolve) => setTimeout(resolve, at - Date.now()));

const started = Date.now();
const wins = [];
let next = 0;
await Promise.all(
  Array.from({ length: callers }, async (_, caller) => {
    while (next < keys) {
      const i = next++;
      const key = `key-${i}`;
      if (await spaces[i % names].prepare(key, { worker, caller, key })) wins.push([i, caller]);
    }
  }),
);
process.send({ type: 'done', wins, started, finished: Date.now() });
await close();
process.disconnect();
