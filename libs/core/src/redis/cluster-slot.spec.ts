import { describe, expect, it } from '@jest/globals';
import { CLUSTER_SLOTS, clusterSlot, slotTag } from './cluster-slot.js';

describe('clusterSlot', () => {
  it('computes the slots Redis Cluster documents', () => {
    // CLUSTER KEYSLOT on a real server gives these.
    expect(clusterSlot('123456789')).toBe(0x31c3 % CLUSTER_SLOTS);
    expect(clusterSlot('foo')).toBe(12182);
    expect(clusterSlot('user:{foo}:x')).toBe(12182);
    expect(clusterSlot('{}foo')).toBe(clusterSlot('{}foo')); // an empty tag hashes the whole key
    expect(clusterSlot('{}foo')).not.toBe(clusterSlot('foo'));
  });

  it('has a tag for every slot', () => {
    for (const slot of [0, 1, 12182, CLUSTER_SLOTS - 1]) expect(clusterSlot(`x{${slotTag(slot)}}y`)).toBe(slot);
    const all = new Set(Array.from({ length: CLUSTER_SLOTS }, (_, slot) => clusterSlot(`{${slotTag(slot)}}`)));
    expect(all.size).toBe(CLUSTER_SLOTS);
  });
});
