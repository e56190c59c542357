import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { ASSET_CREATION, ASSET_TASK } from '../../src/assets/asset-kind';
import { SESSION_CREATION, SESSION_TASK } from '../../src/assets/session-kind';
import { TASK_LIST_KINDS } from '../../src/http/routes/tasks';
import { ERASE_CREATION, ERASE_TASK } from '../../src/media-tasks/erase/kind';
import { IMAGE_CREATION, IMAGE_TASK } from '../../src/media-tasks/images/kind';
import { PODCAST_CREATION, PODCAST_TASK } from '../../src/media-tasks/podcasts/kind';
import { MINUTES_CREATION, MINUTES_TASK } from '../../src/minutes/kind';
import { SUMMARY_CREATION, SUMMARY_TASK } from '../../src/minutes/summary-kind';
import type { CreationPolicy } from '../../src/tasks/creation';
import { VIDEO_CREATION, VIDEO_TASK } from '../../src/video/kind';

/** Every kind with its creation policy, by the kind's name. */
const POLICIES: ReadonlyMap<string, CreationPolicy> = new Map([
  [VIDEO_TASK.kind, VIDEO_CREATION],
  [MINUTES_TASK.kind, MINUTES_CREATION],
  [SUMMARY_TASK.kind, SUMMARY_CREATION],
  [IMAGE_TASK.kind, IMAGE_CREATION],
  [PODCAST_TASK.kind, PODCAST_CREATION],
  [ERASE_TASK.kind, ERASE_CREATION],
  [SESSION_TASK.kind, SESSION_CREATION],
  [ASSET_TASK.kind, ASSET_CREATION],
]);

/** Every member of a policy (the compiler keeps this list complete). */
const MEMBERS: { readonly [K in keyof CreationPolicy]: true } = {
  endpoint: true,
  rateLimit: true,
  submission: true,
  whenUnreachable: true,
  whenRefused: true,
  refusedParam: true,
  status: true,
};

/** The rows of the policy table in docs/tasks.md, by kind. */
function documentedPolicies(): Map<string, string[]> {
  const text = fs.readFileSync(path.resolve(__dirname, '../../docs/tasks.md'), 'utf8');
  const start = text.indexOf('| kind | endpoint |');
  expect(start, 'docs/tasks.md has the policy table').to.be.greaterThan(-1);
  const rows = text.slice(start).split('\n').slice(2);
  const table = new Map<string, string[]>();
  for (const row of rows) {
    if (!row.startsWith('|')) break;
    const [kind, ...cells] = row.split('|').slice(1, -1).map((c) => c.trim());
    table.set(kind!, cells);
  }
  return table;
}

describe('task creation policies', () => {
  it('covers every kind of task the gateway records', () => {
    expect([...POLICIES.keys()].sort()).to.deep.equal([...TASK_LIST_KINDS].sort());
  });

  it('declares every member of the policy for every kind, consistently', () => {
    for (const [kind, policy] of POLICIES) {
      expect(Object.keys(policy).sort(), kind).to.deep.equal(Object.keys(MEMBERS).sort());
      for (const member of Object.keys(MEMBERS)) expect(policy[member as keyof CreationPolicy], `${kind}.${member}`).to.not.equal(undefined);
      // What happens to an inline submission is declared exactly when the kind submits inline.
      const inline = policy.submission === 'inline';
      expect(policy.whenUnreachable !== null, `${kind}.whenUnreachable`).to.equal(inline);
      expect(policy.whenRefused !== null, `${kind}.whenRefused`).to.equal(inline);
      expect(policy.refusedParam !== null, `${kind}.refusedParam`).to.equal(policy.whenRefused === 'answer_400');
    }
  });

  it('is what the table in docs/tasks.md says', () => {
    const documented = documentedPolicies();
    expect([...documented.keys()].sort()).to.deep.equal([...POLICIES.keys()].sort());
    for (const [kind, p] of POLICIES) {
      const cell = (value: string | number | null) => (value === null ? '-' : String(value));
      expect(documented.get(kind), kind).to.deep.equal([p.endpoint, p.rateLimit, p.submission, cell(p.whenUnreachable), cell(p.whenRefused), cell(p.status)]);
    }
  });
});
