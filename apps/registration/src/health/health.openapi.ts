import type { ApiResponseSchemaHost } from '@nestjs/swagger';

type SchemaObject = ApiResponseSchemaHost['schema'];

/** One check's entry in a @nestjs/terminus result: its status and what the indicator adds. */
const indicatorEntry: SchemaObject = {
  type: 'object',
  properties: { status: { type: 'string', enum: ['up', 'down'] } },
  required: ['status'],
  additionalProperties: true,
};

const byCheck: SchemaObject = { type: 'object', additionalProperties: indicatorEntry };

/** The body @nestjs/terminus answers with: `info` (checks up), `error` (checks down), `details` (all). */
export function healthCheckSchema(status: 'ok' | 'error' | 'shutting_down'): SchemaObject {
  return {
    type: 'object',
    properties: {
      status: { type: 'string', enum: ['ok', 'error', 'shutting_down'], example: status },
      info: byCheck,
      error: byCheck,
      details: byCheck,
    },
    required: ['status', 'details'],
  };
}
