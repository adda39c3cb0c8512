// Jest's resolver, with one exception: a require() of Nest from inside nestjs-cls or
// @nestjs-cls/* gets the stand-in of bridged.cjs (see there why).
const { SPECIFIERS, standInFor } = require('./bridged.cjs');

const FROM_CLS = /[\\/]node_modules[\\/](nestjs-cls|@nestjs-cls[\\/][^\\/]+)[\\/]/;

module.exports = (request, options) => {
  if (request.startsWith('@nestjs/') && FROM_CLS.test(`${options.basedir}/`)) {
    if (!SPECIFIERS.includes(request))
      throw new Error(
        `${request} (required from ${options.basedir}) is not bridged: add it to SPECIFIERS in test/support/nest-esm-bridge/bridged.cjs`,
      );
    return standInFor(request);
  }
  return options.defaultResolver(request, options);
};
