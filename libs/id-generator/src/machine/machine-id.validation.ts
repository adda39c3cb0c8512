import { IdGeneratorOptionsError } from '../errors.js';
import type { MachineIdRequest } from './machine-id-distributor.js';

export const MAX_MACHINE_BITS = 31;

export function assertMachineIdRequest(request: MachineIdRequest): void {
  if (!request || typeof request !== 'object')
    throw new IdGeneratorOptionsError('a machine ID request { namespace, machineBits, instanceId } is required');
  const { namespace, machineBits, instanceId } = request;
  if (typeof namespace !== 'string' || namespace.length === 0 || namespace.length > 256) {
    throw new IdGeneratorOptionsError(
      `namespace must be a non-empty string of at most 256 characters, got ${JSON.stringify(namespace)}`,
    );
  }
  if (
    typeof machineBits !== 'number' ||
    !Number.isInteger(machineBits) ||
    machineBits < 1 ||
    machineBits > MAX_MACHINE_BITS
  ) {
    throw new IdGeneratorOptionsError(
      `machineBits must be an integer in [1, ${MAX_MACHINE_BITS}], got ${String(machineBits)}`,
    );
  }
  if (typeof instanceId !== 'string' || instanceId.length === 0 || instanceId.length > 512) {
    throw new IdGeneratorOptionsError(
      `instanceId must be a non-empty string of at most 512 characters, got ${JSON.stringify(instanceId)}`,
    );
  }
}
