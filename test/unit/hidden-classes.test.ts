import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import ts from 'typescript';
import { withChanges } from '../../src/domain/with-changes';

const run = promisify(execFile);

/** Whether the ways of building objects share one hidden class, asked in a fresh process (the probe says why). */
type ProbeAnswers = { spreadLiteral: boolean; withChanges: boolean; prepared: boolean; accessorState: boolean; requestState: boolean };

async function probeHiddenClasses(): Promise<ProbeAnswers> {
  const probe = path.join(__dirname, '../support/hidden-classes-probe.ts');
  const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', probe], { cwd: path.resolve(__dirname, '../..'), timeout: 60_000 });
  return JSON.parse(stdout) as ProbeAnswers;
}

const ROOT = path.resolve(__dirname, '../..');

/** The modules that run for every event folded or appended (src/domain/with-changes.ts says why). */
const PER_EVENT_DIRS = ['projections', 'src/projections-runtime', 'src/eventstore', 'src/domain'];

/** withChanges itself spreads, for the rare data that holds a `__proto__` key. */
const EXEMPT = new Set([path.join(ROOT, 'src/domain/with-changes.ts')]);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Object literals that begin with a spread and go on: `{ ...a, b }`, `{ ...a, ...b }`. */
function spreadFirstLiterals(file: string): string[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && node.properties.length > 1 && ts.isSpreadAssignment(node.properties[0]!)) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart());
      found.push(`${path.relative(ROOT, file)}:${line + 1}: ${node.getText().replace(/\s+/g, ' ').slice(0, 100)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('objects built for every event keep one hidden class per shape', () => {
  let probing: Promise<ProbeAnswers> | undefined;
  /** The probe's answers, asked once for the tests that read them. */
  const probed = (): Promise<ProbeAnswers> => (probing ??= probeHiddenClasses());

  it('withChanges copies a state with its changes applied, and leaves the state alone', () => {
    const state = { frozen: 10, settled: 0, name: 'a' };
    const copy = withChanges(state, { frozen: 7, settled: 3 });
    expect(copy).to.deep.equal({ frozen: 7, settled: 3, name: 'a' });
    expect(Object.keys(copy)).to.deep.equal(['frozen', 'settled', 'name']);
    expect(state).to.deep.equal({ frozen: 10, settled: 0, name: 'a' });
  });

  it('withChanges keeps a `__proto__` key of data read from JSON as a key, never as the prototype', () => {
    const data = JSON.parse('{"__proto__": {"polluted": true}, "amount": 1}') as { amount: number };
    const copy = withChanges(data, { amount: 2 });
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype);
    expect(JSON.stringify(copy)).to.equal('{"__proto__":{"polluted":true},"amount":2}');
  });

  it('withChanges and prepared give the objects they build of one shape one hidden class, where a spread literal adding a key gives each its own', async function () {
    // A Node.js process of its own, started with tsx: seconds on a busy machine.
    this.timeout(90_000);
    const answers = await probed();
    // The control: on this Node, the probe can tell (src/domain/with-changes.ts).
    expect(answers.spreadLiteral).to.equal(false);
    expect(answers.withChanges).to.equal(true);
    expect(answers.prepared).to.equal(true);
  });

  it('every request\'s state has one hidden class with fast properties, where an accessor defined on each request\'s object makes it a dictionary', async function () {
    this.timeout(90_000);
    const answers = await probed();
    expect(answers.accessorState, 'the control').to.equal(false);
    expect(answers.requestState).to.equal(true);
  });

  it('the per-event modules build no object literal that begins with a spread', () => {
    const files = PER_EVENT_DIRS.flatMap((dir) => sourceFiles(path.join(ROOT, dir))).filter((file) => !EXEMPT.has(file));
    expect(files.length).to.be.greaterThan(30);
    const found = files.flatMap(spreadFirstLiterals);
    expect(found, `use withChanges (src/domain/with-changes.ts) or an object literal of its own:\n${found.join('\n')}`).to.deep.equal([]);
  });
});
