import { describe, expect, it } from '@jest/globals';
import { deepClone } from './aggregate-clone.utils.js';

class Money {
  constructor(
    public amount: number,
    public currency: string,
  ) {}
  add(other: Money): Money {
    return new Money(this.amount + other.amount, this.currency);
  }
}

describe('deepClone', () => {
  it('keeps prototypes and copies every level', () => {
    const source = {
      price: new Money(1, 'EUR'),
      at: new Date(5),
      tags: new Set(['a']),
      map: new Map([['k', [1, 2]]]),
      list: [{ x: 1 }],
      bytes: new Uint8Array([1]),
    };
    const copy = deepClone(source);
    expect(copy).toEqual(source);
    expect(copy.price).toBeInstanceOf(Money);
    expect(copy.price.add(new Money(2, 'EUR')).amount).toBe(3);
    for (const key of Object.keys(source) as Array<keyof typeof source>) expect(copy[key]).not.toBe(source[key]);
    copy.list[0].x = 9;
    copy.map.get('k')!.push(3);
    expect(source.list[0].x).toBe(1);
    expect(source.map.get('k')).toEqual([1, 2]);
  });

  it('handles cycles', () => {
    const a: { self?: unknown; name: string } = { name: 'a' };
    a.self = a;
    const copy = deepClone(a);
    expect(copy.self).toBe(copy);
    expect(copy).not.toBe(a);
  });
});
