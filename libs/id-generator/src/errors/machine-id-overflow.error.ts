import { IdGeneratorError } from './id-generator.error.js';

/** Every machine ID the bits allow is held by a live instance (or the fixed one does not fit). */
export class MachineIdOverflowError extends IdGeneratorError {
  override readonly code = 'MACHINE_ID_OVERFLOW';

  constructor(
    readonly namespace: string,
    readonly machineBits: number,
    detail?: string,
  ) {
    super(
      detail ??
        `No free machine ID in namespace "${namespace}": all ${2 ** machineBits} IDs of ${machineBits} bits are held by live instances. ` +
          'Raise machineBits, use another namespace, or wait until a silent instance is reclaimed (safeGuardMs)',
    );
  }
}
