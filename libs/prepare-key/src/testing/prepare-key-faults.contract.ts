import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from '@jest/globals';
import type { PrepareKey } from '../prepare-key.js';
import type { PrepareKeyFactory } from '../prepare-key.factory.js';

/**
 * The faults between a PrepareKey and its store that the contract suite proves answers under:
 *  - `lost-reply-resent`: the store acted, its reply was lost, and the command reached the store
 *    a second time (a driver's resend after a reconnect, e.g. ioredis by default);
 *  - `lost-reply`: the store acted, its reply was lost, nothing was resent: the caller errs;
 *  - `timeout`: the store acted, its reply came after the caller's timeout;
 *  - `request-lost`: the command never reached the store; the caller times out.
 */
export type PrepareKeyFault = 'lost-reply-resent' | 'lost-reply' | 'timeout' | 'request-lost';

export const PREPARE_KEY_FAULTS: readonly PrepareKeyFault[] = [
  'lost-reply-resent',
  'lost-reply',
  'timeout',
  'request-lost',
];

/** An armed fault: `fired` resolves once it hit a command. */
export interface ArmedFault {
  fired: Promise<unknown>;
  cancel(): void;
}

/**
 * How a backend's contract run injects faults (with a fault-injecting proxy between its client
 * and a real server, typically). The suite calls `open(fault)` for every case, arms one fault
 * on the nth store command that concerns PrepareKey `name`, runs one operation through that
 * client, and checks the answer and the state it left with the suite's clean factory.
 */
export interface PrepareKeyFaultTarget {
  /**
   * A factory whose client reaches the store through the fault injector, set up as a caller
   * meeting `fault` would be. The suite passes the name of the PrepareKey the case will use (and
   * arm), so a target may give each case an injector of its own.
   */
  open(
    fault: PrepareKeyFault,
    name?: string,
  ):
    | Promise<{ factory: PrepareKeyFactory; close: () => Promise<void> }>
    | { factory: PrepareKeyFactory; close: () => Promise<void> };
  /** Arms `fault` for the nth (1 = the next) store command about the PrepareKey named `name`. */
  arm(fault: PrepareKeyFault, name: string, nth: number): ArmedFault;
}

type Owner = { owner: string };
type State = Record<string, string | undefined>;

interface FaultCase {
  title: string;
  before: State;
  run: (pk: PrepareKey<Owner>) => Promise<unknown>;
  /** The right answer (a thrown error's class, for a case whose right answer is a rejection). */
  answer: unknown;
  /** The state once the operation took effect. */
  after: State;
  /** Which of the operation's store commands to fault. */
  nth?: number[];
  /** States an error may leave (default: before or after). */
  errorStates?: State[];
}

class ThenFailed extends Error {}

const A = 'A';
const B = 'B';
const C = 'C';
const own = (owner: string): Owner => ({ owner });

const CASES: FaultCase[] = [
  {
    title: 'prepare of an absent key',
    before: { k: undefined },
    run: (pk) => pk.prepare('k', own(A)),
    answer: true,
    after: { k: A },
  },
  {
    title: 'prepare of a held key',
    before: { k: B },
    run: (pk) => pk.prepare('k', own(A)),
    answer: false,
    after: { k: B },
  },
  { title: 'get', before: { k: A }, run: (pk) => pk.get('k'), answer: own(A), after: { k: A } },
  {
    title: 'getValue',
    before: { k: A },
    run: async (pk) => (await pk.getValue('k'))?.value,
    answer: own(A),
    after: { k: A },
  },
  { title: 'rollback(key)', before: { k: A }, run: (pk) => pk.rollback('k'), answer: true, after: { k: undefined } },
  {
    title: 'rollback(key, value) of its value',
    before: { k: A },
    run: (pk) => pk.rollback('k', own(A)),
    answer: true,
    after: { k: undefined },
  },
  {
    title: 'rollback(key, value) of another value',
    before: { k: B },
    run: (pk) => pk.rollback('k', own(A)),
    answer: false,
    after: { k: B },
  },
  {
    title: 'reprepare(key, value)',
    before: { k: A },
    run: (pk) => pk.reprepare('k', own(C)),
    answer: true,
    after: { k: C },
  },
  {
    title: 'reprepare(key, old, new)',
    before: { k: A },
    run: (pk) => pk.reprepare('k', own(A), own(C)),
    answer: true,
    after: { k: C },
  },
  {
    title: 'reprepare(oldKey, oldValue, newKey, newValue)',
    before: { old: A, new: undefined },
    run: (pk) => pk.reprepare('old', own(A), 'new', own(A)),
    answer: true,
    after: { old: undefined, new: A },
    nth: [1, 2],
    // Never neither: the old key is released only after the new one is held.
    errorStates: [
      { old: A, new: undefined },
      { old: A, new: A },
      { old: undefined, new: A },
    ],
  },
  {
    title: 'usingPrepare whose then succeeds',
    before: { k: undefined },
    run: (pk) => pk.usingPrepare('k', own(A), (prepared) => (prepared ? 'done' : 'taken')),
    answer: 'done',
    after: { k: A },
  },
  {
    title: 'usingPrepare whose then fails',
    before: { k: undefined },
    run: (pk) =>
      pk.usingPrepare('k', own(A), (prepared) => {
        if (prepared) throw new ThenFailed('the guarded step failed');
        return 'taken';
      }),
    answer: ThenFailed,
    after: { k: undefined },
  },
];

/**
 * Every operation × every fault the target can inject: the answer is the right one or an
 * error, never a wrong true/false; after an answer the store holds what the answer says; after
 * an error it holds the state before or after the operation (and for a key change, never
 * neither key). A resent command must produce an answer, and the right one.
 */
export function describePrepareKeyFaults(
  faults: readonly PrepareKeyFault[],
  target: () => { clean: PrepareKeyFactory; faults: PrepareKeyFaultTarget },
  uniqueName: () => string,
  concurrent = false,
): void {
  // Each case waits out a client timeout or two; cases that cannot see each other overlap them.
  const test = concurrent ? it.concurrent : it;
  describe('under faults between the library and its store', () => {
    for (const fault of faults) {
      describe(fault, () => {
        for (const c of CASES) {
          for (const nth of c.nth ?? [1]) {
            test(`${c.title}${c.nth ? ` (fault on store command ${nth})` : ''}: the right answer or an error, and the state it says`, async () => {
              const { clean, faults: injector } = target();
              const name = uniqueName();
              const reference = clean.create<Owner>(name);
              for (const [key, owner] of Object.entries(c.before)) {
                if (owner !== undefined) expect(await reference.prepare(key, own(owner))).toBe(true);
              }
              const opened = await injector.open(fault, name);
              try {
                const pk = opened.factory.create<Owner>(name);
                const armed = injector.arm(fault, name, nth);
                let outcome: { answer: unknown } | { error: unknown };
                try {
                  outcome = { answer: await c.run(pk) };
                } catch (error) {
                  outcome = { error };
                }
                armed.cancel();
                // The fault met its command before the operation could answer; the ceiling only
                // turns a fault that never applied into a failure that says so.
                const ceiling = new AbortController();
                try {
                  await Promise.race([
                    armed.fired,
                    sleep(10_000, undefined, { signal: ceiling.signal }).then(() => {
                      throw new Error(`the ${fault} fault was never applied`);
                    }),
                  ]);
                } finally {
                  ceiling.abort();
                }

                const state = await stateOf(reference, Object.keys(c.before));
                const thenFailedIsTheAnswer = c.answer === ThenFailed;
                if ('answer' in outcome) {
                  if (thenFailedIsTheAnswer)
                    throw new Error(`expected a rejection, got ${JSON.stringify(outcome.answer)}`);
                  expect(outcome.answer).toEqual(c.answer);
                  expect(state).toEqual(c.after);
                } else if (thenFailedIsTheAnswer && outcome.error instanceof ThenFailed) {
                  expect(state).toEqual(c.after);
                } else {
                  // A resent command always gets a reply: an error there is a wrong answer.
                  if (fault === 'lost-reply-resent') throw outcome.error;
                  expect(c.errorStates ?? [c.before, c.after]).toContainEqual(state);
                }
              } finally {
                await opened.close();
              }
            });
          }
        }
      });
    }
  });
}

async function stateOf(pk: PrepareKey<Owner>, keys: string[]): Promise<State> {
  const state: State = {};
  for (const key of keys) state[key] = (await pk.get(key))?.owner;
  return state;
}
