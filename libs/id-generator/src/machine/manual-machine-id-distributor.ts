import { IdGeneratorOptionsError, MachineIdOverflowError } from '../errors.js';
import { MachineIdDistributor, type MachineIdDistribution, type MachineIdRequest } from './machine-id-distributor.js';
import { assertMachineIdRequest } from './machine-id.validation.js';

/**
 * A fixed machine ID from configuration. Correct for one process, or for a fleet whose
 * deployment gives every instance its own number; nothing checks that two instances were not
 * given the same one, and the last timestamp is not kept across restarts (a clock that moved
 * back across a restart is not detected).
 */
export class ManualMachineIdDistributor extends MachineIdDistributor {
  constructor(readonly machineId: number) {
    super();
    if (typeof machineId !== 'number' || !Number.isInteger(machineId) || machineId < 0) {
      throw new IdGeneratorOptionsError(`a manual machine ID must be a non-negative integer, got ${String(machineId)}`);
    }
  }

  async distribute(request: MachineIdRequest): Promise<MachineIdDistribution> {
    assertMachineIdRequest(request);
    if (this.machineId >= 2 ** request.machineBits) {
      throw new MachineIdOverflowError(
        request.namespace,
        request.machineBits,
        `machine ID ${this.machineId} does not fit ${request.machineBits} machine bits (at most ${2 ** request.machineBits - 1}); raise machineBits or configure a smaller ID`,
      );
    }
    return { machineId: this.machineId, lastTimestamp: 0 };
  }

  async guard(): Promise<void> {}

  async revert(): Promise<boolean> {
    return true;
  }
}
