// The child side of child-app.ts: serves `operations` over IPC once `start()` resolved, and
// closes the application when told to stop.
export async function serve(start, operations) {
  const app = await start();
  process.on('message', async ({ id, op, args }) => {
    if (op === '__stop') {
      await app.close();
      process.disconnect();
      return;
    }
    try {
      if (typeof operations[op] !== 'function') throw new Error(`no operation ${op}`);
      const value = await operations[op](...args);
      process.send({ id, ok: true, value });
    } catch (error) {
      process.send({
        id,
        ok: false,
        error: { name: error?.name ?? 'Error', message: error?.message ?? String(error), code: error?.code },
      });
    }
  });
  process.send({ ready: true });
}

/** Applies legacy (TypeScript experimentalDecorators) decorators to a method, as `@decorator` would. */
export function decorateMethod(target, name, ...decorators) {
  const descriptor = Reflect.decorate(
    decorators,
    target.prototype,
    name,
    Object.getOwnPropertyDescriptor(target.prototype, name),
  );
  Object.defineProperty(target.prototype, name, descriptor);
}
