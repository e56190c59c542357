/**
 * Run by test/unit/hidden-classes.test.ts in a Node.js process of its own, started with
 * `--allow-natives-syntax`: whether objects built the ways the per-event code builds them share
 * one hidden class (V8's `%HaveSameMap`). A fresh process, because what a process did before
 * changes the answer: while about 1,500 empty objects each given a different key are alive, V8
 * records no more transitions from the empty object's class (its limit is 1,536), and copies
 * made by withChanges with a first key not seen before each get a class of their own; a key
 * recorded before still shares one, and a full collection of those objects lifts it (scripts on
 * Node 20). The check failed so once in CI, run in the suite's own process after other test
 * files. And because the flag is one for the whole process. Prints the answers as JSON.
 */
import { prepared } from '../../src/db/prepared';
import { withChanges } from '../../src/domain/with-changes';
import { RequestState } from '../../src/http/context';
import { createLogger } from '../../src/log';

const sameHiddenClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;
/** False for an object V8 keeps as a dictionary: every read of it a lookup, no inline cache. */
const fastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;

/**
 * The last two of `n` results of `make`: the first runs of a site may share a hidden class even
 * where later ones do not (Node 20 gave a spread literal its own from about the tenth run on).
 */
function lastTwo<T extends object>(make: (i: number) => T, n = 200): [T, T] {
  const made = Array.from({ length: n }, (_, i) => make(i));
  return [made[n - 2]!, made[n - 1]!];
}

type Shape = { frozen: number; settled?: number };

const logger = createLogger('silent');

/** A request's state as a request leaves it: its keys set, its logger made. */
function usedRequestState(i: number): RequestState {
  const state = new RequestState(`req_${i}`, logger);
  state.errorShape = 'openai';
  state.rawBody = '{}';
  void state.logger;
  return state;
}

/** The control: a lazy logger as an accessor defined on each request's plain state object. */
function accessorState(i: number): object {
  const state: Record<string, unknown> = { requestId: `req_${i}` };
  let child: unknown;
  Object.defineProperty(state, 'logger', { get: () => (child ??= {}), enumerable: true, configurable: true });
  state.errorShape = 'openai';
  return state;
}

const answers = {
  // The control: on this Node, a spread literal adding a key gives each copy its own.
  spreadLiteral: sameHiddenClass(...lastTwo((i): Shape => ({ ...{ frozen: i }, settled: i }))),
  withChanges: sameHiddenClass(...lastTwo((i) => withChanges<Shape, 'settled'>({ frozen: i }, { settled: i }))),
  prepared: sameHiddenClass(...lastTwo((i) => prepared('SELECT $1::int AS n', [i]))),
  accessorState: fastProperties(lastTwo(accessorState)[1]),
  requestState: ((pair) => sameHiddenClass(...pair) && fastProperties(pair[1]))(lastTwo(usedRequestState)),
};
process.stdout.write(JSON.stringify(answers));
