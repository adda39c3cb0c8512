import { hostname } from 'node:os';
import { IdGeneratorOptionsError, MachineIdOverflowError } from '../errors.js';
import { MachineIdDistributor, type MachineIdDistribution, type MachineIdRequest } from './machine-id-distributor.js';
import { assertMachineIdRequest } from './machine-id.validation.js';

export interface StatefulSetMachineIdDistributorOptions {
  /** Defaults to the HOSTNAME environment variable, else `os.hostname()`. */
  hostname?: string;
}

/**
 * The ordinal a Kubernetes StatefulSet gives each pod (`web-0`, `web-1`, …): the number after
 * the last `-` of the host name. Kubernetes runs at most one pod per ordinal (unless a node is
 * partitioned and the pod force-deleted), so the ordinal is unique among live pods.
 */
export class StatefulSetMachineIdDistributor extends MachineIdDistributor {
  readonly hostname: string;
  readonly ordinal: number;

  /** `options` may also be the host name itself: `new StatefulSetMachineIdDistributor('web-3')`. */
  constructor(options: StatefulSetMachineIdDistributorOptions | string = {}) {
    super();
    const given = typeof options === 'string' ? options : options.hostname;
    const host = given ?? process.env.HOSTNAME ?? hostname();
    const dash = host.lastIndexOf('-');
    const text = dash < 0 ? '' : host.slice(dash + 1);
    if (!/^(0|[1-9][0-9]{0,9})$/.test(text)) {
      throw new IdGeneratorOptionsError(
        `host name "${host}" does not end in a StatefulSet ordinal ("<name>-<number>"); run as a StatefulSet pod or configure another machine ID distributor`,
      );
    }
    this.hostname = host;
    this.ordinal = Number(text);
  }

  async distribute(request: MachineIdRequest): Promise<MachineIdDistribution> {
    assertMachineIdRequest(request);
    if (this.ordinal >= 2 ** request.machineBits) {
      throw new MachineIdOverflowError(
        request.namespace,
        request.machineBits,
        `StatefulSet ordinal ${this.ordinal} of "${this.hostname}" does not fit ${request.machineBits} machine bits; raise machineBits or lower the replica count`,
      );
    }
    return { machineId: this.ordinal, lastTimestamp: 0 };
  }

  async guard(): Promise<void> {}

  async revert(): Promise<boolean> {
    return true;
  }
}
