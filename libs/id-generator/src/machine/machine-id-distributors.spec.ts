import { describe, expect, it } from '@jest/globals';
import { IdGeneratorOptionsError, MachineIdOverflowError } from '../errors.js';
import { ManualMachineIdDistributor } from './manual-machine-id-distributor.js';
import { StatefulSetMachineIdDistributor } from './stateful-set-machine-id-distributor.js';

const request = { namespace: 'n', machineBits: 10, instanceId: 'i' };

describe('ManualMachineIdDistributor', () => {
  it('hands out its configured ID when it fits the bits', async () => {
    expect(await new ManualMachineIdDistributor(1023).distribute(request)).toEqual({
      machineId: 1023,
      lastTimestamp: 0,
    });
    const overflow = new ManualMachineIdDistributor(1024).distribute(request);
    await expect(overflow).rejects.toThrow(MachineIdOverflowError);
    await expect(overflow).rejects.toThrow(/does not fit 10 machine bits/);
    expect(() => new ManualMachineIdDistributor(-1)).toThrow(IdGeneratorOptionsError);
    expect(() => new ManualMachineIdDistributor(1.5)).toThrow(IdGeneratorOptionsError);
  });
});

describe('StatefulSetMachineIdDistributor', () => {
  it('takes the ordinal after the last "-" of the host name', async () => {
    expect(await new StatefulSetMachineIdDistributor({ hostname: 'orders-api-0' }).distribute(request)).toEqual({
      machineId: 0,
      lastTimestamp: 0,
    });
    expect(await new StatefulSetMachineIdDistributor({ hostname: 'my-app-2-17' }).distribute(request)).toEqual({
      machineId: 17,
      lastTimestamp: 0,
    });
    expect(await new StatefulSetMachineIdDistributor('web-3').distribute(request)).toEqual({
      machineId: 3,
      lastTimestamp: 0,
    }); // the host name alone
  });

  it('refuses host names without an ordinal, and ordinals past the bits', async () => {
    for (const hostname of ['orders', 'orders-', 'orders-x1', 'orders-01', 'orders-1.5']) {
      expect(() => new StatefulSetMachineIdDistributor({ hostname })).toThrow(IdGeneratorOptionsError);
    }
    await expect(new StatefulSetMachineIdDistributor({ hostname: 'web-1024' }).distribute(request)).rejects.toThrow(
      MachineIdOverflowError,
    );
  });

  it('reads the HOSTNAME environment variable by default', async () => {
    const saved = process.env.HOSTNAME;
    process.env.HOSTNAME = 'web-5';
    try {
      expect((await new StatefulSetMachineIdDistributor().distribute(request)).machineId).toBe(5);
    } finally {
      if (saved === undefined) delete process.env.HOSTNAME;
      else process.env.HOSTNAME = saved;
    }
  });
});
