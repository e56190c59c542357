import { expect } from 'chai';
import { minimaxErrorOf } from '../../src/upstreams/minimax/errors';
import { cancelVideoTask, createVideoTask, queryVideoTask, readCreated, readTask } from '../../src/upstreams/minimax/video';
import type { VideoContentItem } from '../../src/upstreams/video-task';
import type { WireAnswer } from '../../src/upstreams/wire';
import { upstreamErrorOf as refusal, wireAnswer as answer } from '../support/wire-answer';

/**
 * The MiniMax video adapter against the fields of MiniMax's public reference for video generation
 * v2 (MiniMax-H3): https://platform.minimax.cn/docs/api-reference/video-generation (create),
 * https://platform.minimax.cn/docs/api-reference/video-generation-query (query), and the error codes
 * of https://platform.minimax.cn/docs/api-reference/errorcode. The fixtures below are written from
 * those pages' field tables and examples (task ids of digits, `task.*` members, the error body).
 */

const CHANNEL = 'minimax-cn';

describe('MiniMax video generation v2 adapter', () => {
  const h3 = { model: 'MiniMax-H3', resolution: '768P', duration: 6, ratio: '16:9', watermark: false };

  describe('building requests', () => {
    it('creates a text-to-video task as the reference\'s example: model, one text item, resolution, duration, ratio', () => {
      const request = createVideoTask({ ...h3, content: [{ type: 'text', text: 'A cat surfs at sunset' }] });
      expect(request).to.deep.equal({
        method: 'POST',
        path: '/v2/video_generation',
        body: { model: 'MiniMax-H3', content: [{ type: 'text', text: 'A cat surfs at sunset' }], resolution: '768P', duration: 6, ratio: '16:9', aigc_watermark: false },
      });
    });

    it('keeps frames and reference images with their roles, joins several text items into the one MiniMax takes, maps watermark', () => {
      const first: VideoContentItem = { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, role: 'first_frame' };
      const last: VideoContentItem = { type: 'image_url', image_url: { url: 'https://example.com/b.png' }, role: 'last_frame' };
      const request = createVideoTask({ ...h3, resolution: '2K', duration: 15, ratio: 'adaptive', watermark: true, content: [{ type: 'text', text: 'one' }, first, { type: 'text', text: 'two' }, last] });
      expect(request.body).to.deep.equal({ model: 'MiniMax-H3', content: [{ type: 'text', text: 'one\ntwo' }, first, last], resolution: '2K', duration: 15, ratio: 'adaptive', aigc_watermark: true });
      const ref: VideoContentItem = { type: 'image_url', image_url: { url: 'https://example.com/r.png' }, role: 'reference_image' };
      expect((createVideoTask({ ...h3, content: [{ type: 'text', text: 'r' }, ref] }).body as { content: unknown[] }).content).to.deep.equal([{ type: 'text', text: 'r' }, ref]);
    });

    it('refuses an asset:// image before sending it: the asset library is Ark\'s, MiniMax cannot fetch it', async () => {
      const err = await refusal(() => createVideoTask({ ...h3, content: [{ type: 'text', text: 'x' }, { type: 'image_url', image_url: { url: 'asset://asset-1' }, role: 'reference_image' }] }));
      expect([err.status, err.code]).to.deep.equal([400, 'unsupported_by_provider']);
    });

    it('queries and cancels by MiniMax\'s task id', () => {
      expect(queryVideoTask('106916112212032')).to.deep.equal({ method: 'GET', path: '/v2/query/video_generation/106916112212032' });
      expect(cancelVideoTask('106916112212032')).to.deep.equal({ method: 'DELETE', path: '/v2/video_generation/106916112212032' });
    });
  });

  describe('reading answers', () => {
    it('reads the created task id (a string of digits; a number is read as one)', async () => {
      expect(readCreated(answer(200, { task_id: '106916112212032' }), CHANNEL)).to.deep.equal({ upstreamId: '106916112212032' });
      expect(readCreated(answer(200, { task_id: 106916112212032 }), CHANNEL)).to.deep.equal({ upstreamId: '106916112212032' });
      expect(await refusal(() => readCreated(answer(200, {}), CHANNEL))).to.include({ status: 502, kind: 'protocol' });
      expect(await refusal(() => readCreated(answer(200, 'not json'), CHANNEL))).to.include({ status: 502, kind: 'protocol' });
    });

    it('reads every status: queued and running pending, failed with its error, cancelled unasked and expired failures, succeeded with its video and usage', () => {
      const task = (t: Record<string, unknown>) => readTask(answer(200, { task: { id: '106916112212032', task_type: 'generation', ...t } }), CHANNEL);
      expect(task({ status: 'queued' })).to.deep.equal({ state: 'pending', upstreamStatus: 'queued' });
      expect(task({ status: 'running' })).to.deep.equal({ state: 'pending', upstreamStatus: 'running' });
      expect(task({ status: 'failed', error: { code: 1026, message: 'video description contains sensitive content' } })).to.deep.equal({
        state: 'failed',
        error: { code: 'input_sensitive_content', message: 'video description contains sensitive content' },
      });
      expect(task({ status: 'failed', error: { code: 1027, message: 'output sensitive' } })).to.deep.include({ error: { code: 'output_sensitive_content', message: 'output sensitive' } });
      expect(task({ status: 'failed', error: { code: 1013, message: 'internal' } })).to.deep.include({ error: { code: 'task_failed', message: 'internal' } });
      expect(task({ status: 'failed' })).to.deep.include({ error: { code: 'task_failed', message: 'the MiniMax task failed' } });
      expect(task({ status: 'cancelled' })).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_cancelled', message: 'the upstream task was cancelled at the provider' } });
      // Not in MiniMax's query reference; read as Ark's expired is (docs/providers.md: not checked against the provider).
      expect(task({ status: 'expired' })).to.deep.equal({ state: 'failed', error: { code: 'upstream_task_expired', message: 'the upstream task expired before it ran' } });
      expect(
        task({
          status: 'succeeded',
          resolution: '768P',
          duration: 6,
          content: { url: 'https://cdn.example.com/video.mp4' },
          usage: { total_seconds: 6, input_seconds: 0, output_seconds: 6, input_image_count: 0, input_audio_seconds: 0, completion_tokens: 1200 },
        }),
      ).to.deep.equal({ state: 'succeeded', video_url: 'https://cdn.example.com/video.mp4', last_frame_url: null, video_url_expires_at: null, usage: { duration_seconds: 6, resolution: '768P', completion_tokens: 1200 } });
    });

    it('bills by what MiniMax reports: usage.output_seconds first, else the task\'s duration', () => {
      const usage = (t: Record<string, unknown>) => {
        const read = readTask(answer(200, { task: { status: 'succeeded', content: { url: 'https://cdn.example.com/v.mp4' }, ...t } }), CHANNEL);
        return read.state === 'succeeded' ? read.usage : null;
      };
      expect(usage({ duration: 10, resolution: '2K', usage: { output_seconds: 9.6 } })).to.deep.equal({ duration_seconds: 9.6, resolution: '2K', completion_tokens: null });
      expect(usage({ duration: 10, resolution: '2K' })).to.deep.equal({ duration_seconds: 10, resolution: '2K', completion_tokens: null });
      expect(usage({})).to.deep.equal({ duration_seconds: undefined, resolution: undefined, completion_tokens: null });
    });

    it('fails a success without a video, and refuses an unknown status as a protocol error', async () => {
      expect(readTask(answer(200, { task: { status: 'succeeded', content: {} } }), CHANNEL)).to.deep.equal({ state: 'failed', error: { code: 'task_failed', message: 'MiniMax reported success without a video' } });
      expect(await refusal(() => readTask(answer(200, { task: { status: 'Processing' } }), CHANNEL))).to.include({ status: 502, kind: 'protocol' });
      expect(await refusal(() => readTask(answer(200, {}), CHANNEL))).to.include({ status: 502, kind: 'protocol' });
    });
  });

  describe('error mapping', () => {
    const v2Error = (status: number, type: string, message: string) => answer(status, { type: 'error', error: { type, message, http_code: status }, request_id: 'req-1' });

    it('maps each v2 error type to the gateway\'s kind; a refused key never carries MiniMax\'s words', () => {
      const cases: [WireAnswer, number, string, string][] = [
        [v2Error(400, 'bad_request_error', 'duration must be 4 to 15'), 400, 'upstream_rejected', 'duration must be 4 to 15'],
        [v2Error(422, 'unprocessable_entity_error', 'input contains sensitive content'), 422, 'input_sensitive_content', 'input contains sensitive content'],
        [v2Error(429, 'rate_limit_error', 'too many requests'), 429, 'upstream_rate_limited', 'too many requests'],
        [v2Error(500, 'server_error', 'internal'), 502, 'upstream_error', 'internal'],
      ];
      for (const [a, status, code, message] of cases) expect(minimaxErrorOf(a, CHANNEL)).to.include({ status, code, message });
      const auth = minimaxErrorOf(v2Error(401, 'authorized_error', 'invalid api key sk-abc…'), CHANNEL);
      expect([auth.status, auth.code]).to.deep.equal([401, 'upstream_auth_failed']);
      expect(auth.message).not.to.include('sk-abc');
      const balance = minimaxErrorOf(v2Error(402, 'insufficient_balance_error', 'insufficient balance'), CHANNEL);
      expect([balance.status, balance.code], 'the operator\'s account: waits like a refused key').to.deep.equal([403, 'upstream_account_balance']);
    });

    it('reads the platform\'s base_resp codes, also on a 200, and keeps a Retry-After', async () => {
      const baseResp = (code: number, msg: string) => answer(200, { base_resp: { status_code: code, status_msg: msg } }, { 'retry-after': '7' });
      expect(minimaxErrorOf(baseResp(1002, 'rate limit'), CHANNEL)).to.include({ status: 429, code: 'upstream_rate_limited', retryAfter: '7' });
      expect(minimaxErrorOf(baseResp(1004, 'authorization failed'), CHANNEL)).to.include({ status: 401, code: 'upstream_auth_failed' });
      expect(minimaxErrorOf(baseResp(2049, 'invalid api key'), CHANNEL)).to.include({ status: 401, code: 'upstream_auth_failed' });
      expect(minimaxErrorOf(baseResp(1008, 'insufficient balance'), CHANNEL)).to.include({ status: 403, code: 'upstream_account_balance' });
      expect(minimaxErrorOf(baseResp(1026, 'input sensitive'), CHANNEL)).to.include({ status: 422, code: 'input_sensitive_content' });
      expect(minimaxErrorOf(baseResp(2013, 'invalid params'), CHANNEL)).to.include({ status: 400, code: 'upstream_rejected', message: 'invalid params (2013)' });
      expect(minimaxErrorOf(baseResp(1013, 'internal'), CHANNEL)).to.include({ status: 502, code: 'upstream_error' });
      expect(await refusal(() => readCreated(baseResp(2013, 'invalid params'), CHANNEL))).to.include({ status: 400, code: 'upstream_rejected' });
      expect(readCreated(answer(200, { task_id: '1', base_resp: { status_code: 0, status_msg: 'success' } }), CHANNEL)).to.deep.equal({ upstreamId: '1' });
    });

    it('maps an error answer without MiniMax\'s body by its status', () => {
      // A bare 403 names no MiniMax code of the key's: the account's refusal, not the credentials'.
      expect(minimaxErrorOf(answer(403, ''), CHANNEL)).to.include({ status: 403, code: 'upstream_forbidden' });
      expect(minimaxErrorOf(answer(401, ''), CHANNEL)).to.include({ status: 401, code: 'upstream_auth_failed' });
      expect(minimaxErrorOf(answer(429, 'slow down'), CHANNEL)).to.include({ status: 429, code: 'upstream_rate_limited' });
      expect(minimaxErrorOf(answer(503, '<html>'), CHANNEL)).to.include({ status: 502, code: 'upstream_error' });
      expect(minimaxErrorOf(answer(404, ''), CHANNEL)).to.include({ status: 400, code: 'upstream_rejected' });
    });
  });
});
