import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { SESSION_EXPIRED, SESSION_TASK, sessionKind, sessionStatus } from '../../src/assets/session-kind';
import { taskDecider } from '../../src/tasks/decider';
import { decodeTask } from '../../src/tasks/kind';
import type { Upstreams } from '../../src/upstreams/registry';
import { UpstreamError } from '../../src/upstreams/errors';
import type { WireAnswer } from '../../src/upstreams/wire';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { wireAnswer } from '../support/wire-answer';

/** The session kind's reading of the provider, with a stub provider and a clock the test sets: no HTTP, no sleeping. */

const created = '2026-03-01T10:00:00.000Z';
const minutes = (n: number) => new Date(Date.parse(created) + n * 60_000);

function session(reverifies: Record<string, string> = {}) {
  const request = { group_id: 'grp_1', name: null, upstream_group_id: null, ...reverifies };
  return decodeTask(SESSION_TASK, { ...taskDecider.initialState(), status: 'queued', taskId: 'avs_1', kind: 'asset_session', model: 'asset-verification', request, upstreamId: 'up_1', createdAt: created });
}

/** GetVisualValidateResult's answer: a Result, or the provider's refusal `[status, Code, Message]`. */
function resultAnswer(provider: Record<string, unknown> | readonly [number, string, string]): WireAnswer {
  const metadata = { RequestId: '20260301100000ABCDEF', Action: 'GetVisualValidateResult', Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' };
  if (!Array.isArray(provider)) return wireAnswer(200, { ResponseMetadata: metadata, Result: provider });
  const [status, code, message] = provider as readonly [number, string, string];
  return wireAnswer(status, { ResponseMetadata: { ...metadata, Error: { Code: code, Message: message } } });
}

function kindWith(provider: Record<string, unknown> | readonly [number, string, string], now: Date) {
  const upstreams = { channel: () => ({ name: 'ark-assets', call: async () => resultAnswer(provider) }) } as unknown as Upstreams;
  // Only polls here: a submit would route, and no test of this file submits.
  const router = { attempt: () => Promise.reject(new Error('no submit in this test')) };
  return sessionKind({ catalog: new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), upstreams, router, clock: () => now, pollMs: 1000 });
}

describe('asset verification sessions: the provider read against the 30-minute window', () => {
  it('stays pending until 30 minutes after creation, and expires at exactly 30', async () => {
    expect(await kindWith({}, minutes(29.99)).poll(session())).to.deep.equal({ state: 'pending', upstreamStatus: 'queued' });
    const expired = await kindWith({}, minutes(30)).poll(session());
    expect(expired).to.deep.include({ state: 'failed' });
    expect((expired as { error: { code: string } }).error.code).to.equal(SESSION_EXPIRED);
  });

  it('takes the provider\'s verdict over the clock: verified late is still verified, and the provider may expire it early', async () => {
    expect(await kindWith({ GroupId: 'grp-up' }, minutes(31)).poll(session())).to.deep.equal({
      state: 'succeeded',
      result: { upstream_group_id: 'grp-up' },
      usage: { sessions: 1 },
      artifacts: [],
    });
    expect(((await kindWith([400, SESSION_EXPIRED, 'the link expired'], minutes(1)).poll(session())) as { error: { code: string } }).error.code).to.equal(SESSION_EXPIRED);
    expect(await kindWith([400, 'liveness_check_failed', 'no'], minutes(1)).poll(session())).to.deep.equal({
      state: 'failed',
      error: { code: 'liveness_check_failed', message: 'no' },
    });
  });

  it("leaves the session to the engine's retries when the provider fails or refuses the gateway's own credentials", async () => {
    for (const provider of [[500, 'InternalError', 'Service has some internal Error.'], [429, 'FlowLimitExceeded', 'slow down'], [401, 'SignatureDoesNotMatch', 'bad signature']] as const) {
      const err = await kindWith(provider, minutes(1)).poll(session()).then(() => null, (e: unknown) => e);
      expect(err, provider[1]).to.be.instanceOf(UpstreamError);
    }
  });

  it('opens a re-verification only on the channel holding the group, a new group on any', async () => {
    const asked: (string | undefined)[] = [];
    const router = {
      attempt: async <T>(_model: unknown, _call: unknown, options: { only?: string } = {}) => {
        asked.push(options.only);
        // What the routed call would have answered; the call itself is the provider's, tested elsewhere.
        return { value: { upstreamId: 'token' } as T, channel: options.only ?? 'assets-a' };
      },
    };
    const kind = sessionKind({ catalog: new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES), upstreams: {} as Upstreams, router, clock: () => minutes(0), pollMs: 1000 });
    expect(await kind.submit(session({ upstream_group_id: 'grp-up', upstream_channel: 'assets-b' }))).to.deep.include({ channel: 'assets-b' });
    await kind.submit(session());
    expect(asked).to.deep.equal(['assets-b', undefined]);
  });

  it('reads task states as session statuses', () => {
    expect(sessionStatus({ status: 'queued', error: null })).to.equal('pending');
    expect(sessionStatus({ status: 'running', error: null })).to.equal('pending');
    expect(sessionStatus({ status: 'succeeded', error: null })).to.equal('verified');
    expect(sessionStatus({ status: 'failed', error: { code: SESSION_EXPIRED, message: '' } })).to.equal('expired');
    expect(sessionStatus({ status: 'failed', error: { code: 'consent_declined', message: '' } })).to.equal('failed');
  });

  it('charges the catalog fee per verified session', () => {
    expect(kindWith({}, minutes(0)).settlement(session()).pricing).to.deep.equal({ amount: 100_000, lines: [{ units: { sessions: 1 }, unit_prices: { sessions: 100_000 }, per: 1, amount: 100_000 }] });
  });
});
