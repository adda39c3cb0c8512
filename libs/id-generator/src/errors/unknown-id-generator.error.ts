import { IdGeneratorError } from './id-generator.error.js';

/** A generator was asked for by a name that `generators` does not hold. */
export class UnknownIdGeneratorError extends IdGeneratorError {
  override readonly code = 'UNKNOWN_ID_GENERATOR';

  constructor(
    readonly generatorName: string,
    known: string[],
    where: string,
  ) {
    super(
      `${where} names the ID generator "${generatorName}", which is not configured; add it to ` +
        `IdGeneratorModule.forRoot({ generators: { ${JSON.stringify(generatorName)}: ... } }) (configured: ${known.length ? known.map((k) => JSON.stringify(k)).join(', ') : 'none'})`,
    );
  }
}
