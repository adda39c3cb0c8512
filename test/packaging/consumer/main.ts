// Runs one library's consumer check: `node dist/main.js <memory|drivers> <library>` imports
// `./<library>.<mode>.js` and awaits its `run()`. The test starts one process per check.
import 'reflect-metadata';

const [mode, library] = process.argv.slice(2);
if ((mode !== 'memory' && mode !== 'drivers') || !library) {
  console.error('usage: node dist/main.js <memory|drivers> <library>');
  process.exit(2);
}
// A check whose promise never settles (a driver that dropped its callback) would end the
// process with exit code 13 and no word: say which one it was.
let settled = false;
process.on('exit', (code) => {
  if (!settled)
    console.error(
      `the ${library} ${mode} check never finished (exit code ${code}): a promise it awaited never settled`,
    );
});
const check = (await import(`./${library}.${mode}.js`)) as { run(): Promise<void> };
try {
  await check.run();
} finally {
  settled = true;
}
console.log(`ok ${library} ${mode}`);
