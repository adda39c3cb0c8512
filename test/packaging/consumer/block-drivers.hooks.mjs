let blocked = [];

export function initialize(data) {
  blocked = data.blocked;
}

export async function resolve(specifier, context, next) {
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  if (blocked.includes(name)) {
    const error = new Error(
      `Cannot find package '${name}' imported from ${context.parentURL} (not installed: an optional driver)`,
    );
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}
