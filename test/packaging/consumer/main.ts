// Runs one library's consumer check: `node dist/main.js <memory|drivers> <library>` imports
// `./<library>.<mode>.js` and awaits its `run()`. The test starts one process per check.
import 'reflect-metadata';

const [mode, library] = process.argv.slice(2);
if ((mode !== 'memory' && mode !== 'drivers') || !library) {
  console.error('usage: node dist/main.js <memory|drivers> <library>');
  process.exit(2);
}
const check = (await import(`./${library}.${mode}.js`)) as { run(): Promise<void> };
await check.run();
console.log(`ok ${library} ${mode}`);
