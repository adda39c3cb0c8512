import { describe, expect, it } from '@jest/globals';
import { Aggregate, getAggregateName } from './aggregate.decorator.js';

describe('getAggregateName', () => {
  it("is the declared name, inherited by subclasses, else the class's own name", () => {
    @Aggregate({ name: 'core-spec-parent' })
    class Parent {}
    class Child extends Parent {}
    class Plain {}
    expect(getAggregateName(Parent)).toBe('core-spec-parent');
    expect(getAggregateName(new Child())).toBe('core-spec-parent');
    expect(getAggregateName(Plain)).toBe('Plain');
  });

  it('follows a declaration made after the name was asked for (its answers are kept per class)', () => {
    class Late {}
    class LateChild extends Late {}
    expect(getAggregateName(Late)).toBe('Late');
    expect(getAggregateName(LateChild)).toBe('LateChild');
    Aggregate({ name: 'core-spec-late' })(Late);
    expect(getAggregateName(Late)).toBe('core-spec-late');
    expect(getAggregateName(LateChild)).toBe('core-spec-late');
  });
});
