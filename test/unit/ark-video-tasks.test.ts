import { expect } from 'chai';
import {
  cancelSeedanceTask,
  createSeedanceTask,
  getSeedanceTask,
  readCancelledSeedanceTask,
  readCreatedSeedanceTask,
  readSeedanceTask,
} from '../../src/upstreams/ark/video-tasks';
import type { VideoTaskAsk } from '../../src/upstreams/video-task';
import { wireAnswer as answer, thrown } from '../support/wire-answer';

/**
 * The Ark video-task adapter against the examples of Ark's public reference:
 * - the get answer of a succeeded task, from https://www.volcengine.com/docs/82379/1521309 (as
 *   reproduced, unchanged, at https://docs.powertokens.ai/en/zmodelVideo/byteplus/seedance/seedance-tasks-query);
 * - the create answer `{"id": "cgt-2024****-**"}`, https://www.volcengine.com/docs/82379/1520757;
 * - error bodies and codes, https://www.volcengine.com/docs/82379/1299023 (400
 *   `InputImageSensitiveContentDetected.PrivacyInformation`, 401 `AuthenticationError`).
 */

const DOCUMENTED_SUCCEEDED_TASK = {
  id: 'cgt-2026****-****',
  model: 'doubao-seedance-2-0-260128',
  status: 'succeeded',
  content: { video_url: 'https://ark-content-generation-cn-beijing.tos-cn-beijing.volces.com/xxx' },
  usage: { completion_tokens: 108900, total_tokens: 108900 },
  created_at: 1779348818,
  updated_at: 1779348874,
  seed: 78674,
  resolution: '720p',
  ratio: '16:9',
  duration: 5,
  framespersecond: 24,
  service_tier: 'default',
  execution_expires_after: 172800,
  generate_audio: true,
  draft: false,
  priority: 0,
};

const DOCUMENTED_PRIVACY_ERROR = {
  error: {
    code: 'InputImageSensitiveContentDetected.PrivacyInformation',
    message: 'The request failed because the input image may contain real person. Request id: 0217***',
    param: '',
    type: 'BadRequest',
  },
};

const DOCUMENTED_AUTH_ERROR = {
  error: { code: 'AuthenticationError', message: 'The API key format is incorrect. Request id: 021754042105330a133a101f47465e089b698973c39ca08ddf1b6', param: '', type: 'Unauthorized' },
};

const TEXT_REQUEST: VideoTaskAsk = {
  model: 'doubao-seedance-1-5-pro-251215',
  content: [{ type: 'text', text: 'a kitten yawns at the moon' }],
  mode: 'text',
  resolution: '720p',
  ratio: '16:9',
  duration: 5,
  seed: -1,
  generate_audio: true,
  draft: false,
  return_last_frame: false,
  camera_fixed: false,
  watermark: false,
  service_tier: 'default',
  safety_identifier: null,
  draft_task: null,
};

describe('Ark video tasks: requests', () => {
  it('creates a task with the body fields at the top level, the task id as X-Client-Request-Id', () => {
    const request = createSeedanceTask(TEXT_REQUEST, 'vid_1');
    expect(request).to.deep.equal({
      method: 'POST',
      path: '/contents/generations/tasks',
      headers: { 'x-client-request-id': 'vid_1' },
      model: 'doubao-seedance-1-5-pro-251215',
      body: {
        model: 'doubao-seedance-1-5-pro-251215',
        content: [{ type: 'text', text: 'a kitten yawns at the moon' }],
        resolution: '720p',
        ratio: '16:9',
        duration: 5,
        seed: -1,
        generate_audio: true,
        return_last_frame: false,
        watermark: false,
        service_tier: 'default',
      },
    });
  });

  it('sends draft, camera_fixed, flex and the safety identifier when asked; no generate_audio where the model takes none', () => {
    const body = createSeedanceTask({ ...TEXT_REQUEST, draft: true, camera_fixed: true, generate_audio: null, service_tier: 'flex', safety_identifier: 'user-7', return_last_frame: true }, 'vid_2').body;
    expect(body).to.include({ draft: true, camera_fixed: true, service_tier: 'flex', safety_identifier: 'user-7', return_last_frame: true });
    expect(body).to.not.have.property('generate_audio');
  });

  it('leaves camera_fixed out with reference images, which Ark does not take it with', () => {
    const content = [
      { type: 'text' as const, text: 'the cat of the picture' },
      { type: 'image_url' as const, image_url: { url: 'asset://asset-sim-1' }, role: 'reference_image' },
    ];
    const body = createSeedanceTask({ ...TEXT_REQUEST, mode: 'references', content, camera_fixed: true }, 'vid_3').body;
    expect(body).to.not.have.property('camera_fixed');
    expect(body).to.have.deep.property('content', content);
  });

  it('makes the final of a draft from the draft task alone: no prompt, ratio, duration, seed, audio or draft flag', () => {
    const body = createSeedanceTask({ ...TEXT_REQUEST, mode: 'draft_final', draft: true, camera_fixed: true, resolution: '1080p', draft_task: { upstream_id: 'cgt-draft-1' } }, 'vid_4').body;
    expect(body).to.deep.equal({
      model: 'doubao-seedance-1-5-pro-251215',
      content: [{ type: 'draft_task', draft_task: { id: 'cgt-draft-1' } }],
      resolution: '1080p',
      return_last_frame: false,
      watermark: false,
      service_tier: 'default',
    });
  });

  it('gets and cancels (DELETE) a task by its id, escaped in the path', () => {
    expect(getSeedanceTask('cgt-1/2')).to.deep.equal({ method: 'GET', path: '/contents/generations/tasks/cgt-1%2F2' });
    expect(cancelSeedanceTask('cgt-1')).to.deep.equal({ method: 'DELETE', path: '/contents/generations/tasks/cgt-1' });
  });
});

describe('Ark video tasks: answers', () => {
  it('reads the created task id', () => {
    expect(readCreatedSeedanceTask(answer(200, { id: 'cgt-2024****-**' }), 'ark')).to.deep.equal({ upstreamId: 'cgt-2024****-**' });
  });

  it("keeps Ark's code and message of a refusal (the real-person image)", () => {
    const err = thrown(() => readCreatedSeedanceTask(answer(400, DOCUMENTED_PRIVACY_ERROR), 'ark'));
    expect(err.status).to.equal(400);
    expect(err.code).to.equal('InputImageSensitiveContentDetected.PrivacyInformation');
    expect(err.message).to.contain('may contain real person');
  });

  it("turns a refused key into the gateway's own error, quoting nothing of Ark's answer", () => {
    const err = thrown(() => readCreatedSeedanceTask(answer(401, DOCUMENTED_AUTH_ERROR), 'ark'));
    expect(err.status).to.equal(401);
    expect(err.code).to.equal('upstream_auth_failed');
    expect(err.message).to.not.contain('API key format');
  });

  it("passes on Ark's Retry-After of a 429, and reads an error answer that is not JSON", () => {
    const limited = thrown(() => readCreatedSeedanceTask(answer(429, { error: { code: 'RateLimitExceeded.EndpointRPMExceeded', message: 'slow down', param: '', type: 'TooManyRequests' } }, { 'retry-after': '3' }), 'ark'));
    expect([limited.status, limited.code, limited.retryAfter]).to.deep.equal([429, 'RateLimitExceeded.EndpointRPMExceeded', '3']);
    const broken = thrown(() => readSeedanceTask(answer(502, '<html>bad gateway</html>'), 'ark'));
    expect([broken.status, broken.code, broken.message]).to.deep.equal([502, null, 'channel ark: the provider answered HTTP 502 without an error it documents']);
  });

  it('reads the documented succeeded task: video, 24 h validity from its last update, duration, resolution and tokens', () => {
    expect(readSeedanceTask(answer(200, DOCUMENTED_SUCCEEDED_TASK), 'ark')).to.deep.equal({
      state: 'succeeded',
      video_url: 'https://ark-content-generation-cn-beijing.tos-cn-beijing.volces.com/xxx',
      last_frame_url: null,
      video_url_expires_at: 1779348874 + 86_400,
      usage: { duration_seconds: 5, resolution: '720p', completion_tokens: 108900 },
    });
  });

  it("reads the last frame, and the link's own expiry when it is a presigned TOS link", () => {
    const url = 'https://ark-content-generation-cn-beijing.tos-cn-beijing.volces.com/v.mp4?X-Tos-Algorithm=TOS4-HMAC-SHA256&X-Tos-Date=20260101T000000Z&X-Tos-Expires=3600&X-Tos-Signature=s';
    const reading = readSeedanceTask(answer(200, { ...DOCUMENTED_SUCCEEDED_TASK, content: { video_url: url, last_frame_url: 'https://x/last.png' } }), 'ark');
    expect(reading).to.include({ state: 'succeeded', last_frame_url: 'https://x/last.png', video_url_expires_at: Date.UTC(2026, 0, 1) / 1000 + 3600 });
  });

  it('reads queued and running as pending', () => {
    for (const status of ['queued', 'running'] as const) {
      expect(readSeedanceTask(answer(200, { id: 'cgt-1', status, error: null }), 'ark')).to.deep.equal({ state: 'pending', upstreamStatus: status });
    }
  });

  it("reads a failure with Ark's code, and one without an error as task_failed", () => {
    const failed = { id: 'cgt-1', status: 'failed', error: { code: 'OutputVideoSensitiveContentDetected', message: 'The request failed because the output video may contain sensitive information.' } };
    expect(readSeedanceTask(answer(200, failed), 'ark')).to.deep.equal({ state: 'failed', error: failed.error });
    expect(readSeedanceTask(answer(200, { id: 'cgt-1', status: 'failed', error: null }), 'ark')).to.deep.equal({ state: 'failed', error: { code: 'task_failed', message: 'the upstream task failed' } });
  });

  it("reads Ark's expired and a cancellation the gateway did not ask for as failures with the gateway's codes", () => {
    expect(readSeedanceTask(answer(200, { id: 'cgt-1', status: 'expired' }), 'ark')).to.have.nested.property('error.code', 'upstream_task_expired');
    expect(readSeedanceTask(answer(200, { id: 'cgt-1', status: 'cancelled' }), 'ark')).to.have.nested.property('error.code', 'upstream_task_cancelled');
  });

  it('reads a success without a video as a failure, and an unknown status as the provider talking nonsense (502)', () => {
    expect(readSeedanceTask(answer(200, { ...DOCUMENTED_SUCCEEDED_TASK, content: {} }), 'ark')).to.deep.equal({ state: 'failed', error: { code: 'task_failed', message: 'the upstream reported success without a video' } });
    const err = thrown(() => readSeedanceTask(answer(200, { id: 'cgt-1', status: 'paused' }), 'ark'));
    expect([err.status, err.kind]).to.deep.equal([502, 'protocol']);
  });

  it('reads a cancel: `{}` is done, a refusal (a running task) is thrown', () => {
    expect(() => readCancelledSeedanceTask(answer(200, {}), 'ark')).to.not.throw();
    const err = thrown(() => readCancelledSeedanceTask(answer(400, { error: { code: 'InvalidParameter', message: 'running', param: 'id', type: 'BadRequest' } }), 'ark'));
    expect(err.code).to.equal('InvalidParameter');
  });
});
