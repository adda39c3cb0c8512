import { BadRequestException, ValidationPipe, type ArgumentMetadata, type Type } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { TOO_DEEP, valueNestsDeeperThan } from './json-depth.js';

/**
 * Every body and query of the API, checked against its DTO class: validation that refuses
 * unknown fields (400), and before it two checks on the value as it was parsed, which
 * class-transformer would otherwise make moot:
 *  - a field the DTO does not declare is refused whatever its name: class-transformer drops
 *    `__proto__`, `constructor` or `toString` silently instead of reporting them, so the own
 *    keys of the parsed value are compared with the DTO's (JSON.parse keeps `__proto__` as an
 *    own key; Express's query parser builds objects without a prototype);
 *  - a value nested deeper than MAX_JSON_DEPTH is refused before class-validator recurses into
 *    it (configureApp's body parser already refuses such bodies; this holds however the
 *    application was created).
 */
export class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      forbidUnknownValues: true,
      stopAtFirstError: true,
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const dto = metadata.metatype;
    if ((metadata.type === 'body' || metadata.type === 'query') && dto && this.toValidate(metadata)) {
      if (valueNestsDeeperThan(value)) throw new BadRequestException(TOO_DEEP);
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const known = fieldsOf(dto);
        const unknown = Object.keys(value).find((key) => !known.has(key));
        if (unknown !== undefined) throw new BadRequestException([`property ${unknown} should not exist`]);
      }
    }
    return super.transform(value, metadata);
  }
}

/** The properties a DTO class declares to class-validator (its own and inherited ones). */
function fieldsOf(dto: Type): Set<string> {
  return new Set(
    getMetadataStorage()
      .getTargetValidationMetadatas(dto, '', true, false)
      .map((m) => m.propertyName),
  );
}
