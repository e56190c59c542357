import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE } from '../../src/billing/catalog';
import { ApiError } from '../../src/http/errors';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { normalizeVideoRequest, VIDEO_RULES } from '../../src/video/normalize';
import type { VideoRequestBody } from '../../src/video/request';

const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
const context = { draft: null, now: new Date('2026-03-01T00:00:00Z'), accountDefaultMode: 'auto' as const, allowPrivateTargets: false };

function refusal(modelId: string, body: Omit<VideoRequestBody, 'model'>): { code: string; param: string | null | undefined } {
  try {
    normalizeVideoRequest(catalog.get(modelId)!, { model: modelId, ...body }, context);
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    const api = err as ApiError;
    expect(api.status).to.equal(400);
    return { code: api.code, param: api.options.param };
  }
  throw new Error('the request was accepted');
}

describe('video rules: one named check per spec rule', () => {
  it('names every rule once and files each under the requests it applies to', () => {
    const names = VIDEO_RULES.map((r) => r.name);
    expect(new Set(names).size).to.equal(names.length);
    expect(new Set(VIDEO_RULES.map((r) => r.applies))).to.deep.equal(new Set(['every_request', 'draft_final', 'generation']));
  });

  it('answers the first rule a request breaks, in the table\'s order', () => {
    // The H3 class: no generate_audio at all, a concrete ratio for text-to-video, 768P or 2K, 4 to 15 s.
    const h3 = { content: [{ type: 'text' as const, text: 'a cat' }] };
    expect(refusal('video-h3', { ...h3, generate_audio: false, resolution: '720p', duration: 3 })).to.deep.equal({ code: 'unsupported_parameter', param: 'generate_audio' });
    expect(refusal('video-h3', { ...h3, resolution: '720p', duration: 3 })).to.deep.equal({ code: 'unsupported_resolution', param: 'resolution' });
    expect(refusal('video-h3', { ...h3, resolution: '2K', duration: 3 })).to.deep.equal({ code: 'unsupported_duration', param: 'duration' });
    expect(refusal('video-h3', { ...h3, resolution: '2K', duration: 4 })).to.deep.equal({ code: 'ratio_required', param: 'ratio' });
  });

  it('applies the spec\'s defaults to a request that keeps every rule', () => {
    const normalized = normalizeVideoRequest(catalog.get('video-ref-2.0')!, { model: 'video-ref-2.0', content: [{ type: 'text', text: 'a cat' }] }, context);
    expect(normalized).to.deep.include({ mode: 'text', resolution: '720p', ratio: 'adaptive', duration: 5, seed: -1, generate_audio: true, draft: false, billed_seconds: 5, video_url_mode: 'auto' });
  });
});
