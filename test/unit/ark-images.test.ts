import { expect } from 'chai';
import { ARK_MAX_IMAGES, arkImageRequest, readArkImages } from '../../src/upstreams/ark/images';
import type { ImageGenerationCall } from '../../src/upstreams/images';
import { wireAnswer as answer, thrown } from '../support/wire-answer';

/**
 * The Ark image adapter against Ark's public reference, https://www.volcengine.com/docs/82379/1541523
 * (图片生成 API), whose examples are the fixtures here:
 * - the request of a sequential text-to-image generation (the reference's tutorial,
 *   https://www.volcengine.com/docs/82379/1824121, 文生组图: `sequential_image_generation: auto`,
 *   `sequential_image_generation_options: {max_images: 4}`, `response_format`, `size`, `watermark`);
 * - the non-streamed answer `{model, created, data: [{url, size}], usage: {generated_images,
 *   output_tokens, total_tokens}}` (BytePlus ModelArk's copy of the reference,
 *   https://docs.byteplus.com/en/docs/ModelArk/1541523: `seedream-4-5-251128`, 1760x2368, 16280 tokens);
 * - a failed image of a sequential generation, `data[].error {code, message}`, and only generated
 *   images counted by `usage.generated_images` ("仅对成功生成图片按张数进行计费");
 * - error bodies, https://www.volcengine.com/docs/82379/1299023 (`{"error": {code, message, param, type}}`).
 */

const DOCUMENTED_SEQUENTIAL_REQUEST = {
  model: 'doubao-seedream-4-5-251128',
  prompt: '生成一组共4张连贯插画，核心为同一庭院一角的四季变迁，以统一风格展现四季独特色彩、元素与氛围',
  sequential_image_generation: 'auto',
  sequential_image_generation_options: { max_images: 4 },
  response_format: 'url',
  size: '2K',
  stream: true,
  watermark: true,
};

const DOCUMENTED_ANSWER = {
  model: 'seedream-4-5-251128',
  created: 1757323224,
  data: [{ url: 'https://ark-content-generation-v2-ap-southeast-1.tos-ap-southeast-1.volces.com/seedream-4-5/0.jpeg', size: '1760x2368' }],
  usage: { generated_images: 1, output_tokens: 16280, total_tokens: 16280 },
};

const DOCUMENTED_INVALID_SIZE = {
  error: {
    code: 'InvalidParameter',
    message: 'The parameter `size` specified in the request is not valid: total pixels must be within [3686400, 16777216]. Request id: 021757323224000abcdef',
    param: 'size',
    type: 'BadRequest',
  },
};

const call = (over: Partial<ImageGenerationCall> = {}): ImageGenerationCall => ({
  model: 'doubao-seedream-4-5-251128',
  prompt: 'a lighthouse',
  n: 1,
  width: 2048,
  height: 2048,
  outputFormat: null,
  responseFormat: 'url',
  ...over,
});

const url = (i: number) => ({ url: `https://ark.example/${i}.jpeg`, size: '2048x2048' });

describe('Ark image generation (Seedream): building the request', () => {
  it("builds a sequential generation with the documented example's fields, n as max_images, the size as WxH, never streamed", () => {
    const request = arkImageRequest(call({ n: 4, prompt: DOCUMENTED_SEQUENTIAL_REQUEST.prompt, watermark: true }));
    expect(request).to.deep.include({ method: 'POST', path: '/images/generations', model: 'doubao-seedream-4-5-251128' });
    expect(request.body).to.deep.equal({ ...DOCUMENTED_SEQUENTIAL_REQUEST, size: '2048x2048', stream: false });
    expect(Object.keys(request.body as object)).to.have.members(Object.keys(DOCUMENTED_SEQUENTIAL_REQUEST));
  });

  it('asks one image as a disabled sequential generation, and leaves watermark to Ark when the catalog says nothing', () => {
    expect(arkImageRequest(call({ responseFormat: 'b64_json', width: 2560, height: 1440 })).body).to.deep.equal({
      model: 'doubao-seedream-4-5-251128',
      prompt: 'a lighthouse',
      size: '2560x1440',
      sequential_image_generation: 'disabled',
      response_format: 'b64_json',
      stream: false,
    });
    expect(arkImageRequest(call({ watermark: false })).body).to.deep.include({ watermark: false });
  });

  it('sends output_format only to a model that takes it (5.0-lite), as the gateway asked it', () => {
    expect(arkImageRequest(call({ model: 'doubao-seedream-5-0-260128', outputFormat: 'png' })).body).to.deep.include({ output_format: 'png' });
    expect(arkImageRequest(call({ outputFormat: null })).body).to.not.have.property('output_format');
  });

  it("refuses what Ark cannot be asked: OpenAI's options (the catalog lists none for Ark's models), more than 15 images", () => {
    expect(() => arkImageRequest(call({ options: { quality: 'high' } }))).to.throw(/none of OpenAI's image options \(quality\)/);
    expect(() => arkImageRequest(call({ n: ARK_MAX_IMAGES + 1 }))).to.throw(/1 to 15 images/);
    expect(arkImageRequest(call({ n: ARK_MAX_IMAGES })).body).to.deep.include({ sequential_image_generation_options: { max_images: 15 } });
  });
});

describe('Ark image generation (Seedream): reading the answer', () => {
  it("reads the documented answer: its images, created, no token usage (Ark's models are billed per image)", () => {
    expect(readArkImages(answer(200, DOCUMENTED_ANSWER), { n: 1 }, 'ark')).to.deep.equal({
      created: 1757323224,
      images: [{ url: DOCUMENTED_ANSWER.data[0]!.url, layers: [] }],
      tokens: null,
    });
  });

  it('keeps the images usage.generated_images bills: a failed image of a sequential generation is skipped, fewer than asked is fewer kept', () => {
    const body = {
      created: 1,
      data: [url(0), { error: { code: 'OutputImageSensitiveContentDetected', message: 'The generated image may contain sensitive content.' } }, url(2)],
      usage: { generated_images: 2, output_tokens: 32768, total_tokens: 32768 },
    };
    const read = readArkImages(answer(200, body), { n: 4 }, 'ark');
    expect(read.images.map((i) => i.url)).to.deep.equal(['https://ark.example/0.jpeg', 'https://ark.example/2.jpeg']);
    // Ark billing fewer than came back: only those are kept (and billed by the gateway).
    const billedOne = readArkImages(answer(200, { ...body, usage: { generated_images: 1 } }), { n: 4 }, 'ark');
    expect(billedOne.images).to.have.length(1);
    // Never more than asked, whatever came back; without usage, what came back.
    expect(readArkImages(answer(200, { data: [url(0), url(1), url(2)] }), { n: 2 }, 'ark').images).to.have.length(2);
    expect(readArkImages(answer(200, { data: [{ b64_json: 'AAAA' }] }), { n: 1 }, 'ark')).to.deep.equal({ created: null, images: [{ b64_json: 'AAAA', layers: [] }], tokens: null });
  });

  it("reads a layered item's layers, named for file keys (the gateway's layered class, not in Ark's reference)", () => {
    const item = { ...url(0), layers: [{ name: 'Foreground', url: 'https://ark.example/fg.png' }, { name: '../x', b64_json: 'AAAA' }, 'junk'] };
    expect(readArkImages(answer(200, { data: [item] }), { n: 1 }, 'ark').images[0]!.layers).to.deep.equal([
      { name: 'foreground', url: 'https://ark.example/fg.png' },
      { name: 'layer_2', b64_json: 'AAAA' },
    ]);
  });

  it("makes no image at all Ark's failure: every image refused is a 400 with Ark's code, nothing at all a 502 no_images", () => {
    const refused = thrown(() =>
      readArkImages(answer(200, { data: [{ error: { code: 'OutputImageSensitiveContentDetected', message: 'The generated image may contain sensitive content.' } }], usage: { generated_images: 0 } }), { n: 1 }, 'ark'),
    );
    expect([refused.status, refused.code, refused.message]).to.deep.equal([400, 'OutputImageSensitiveContentDetected', 'The generated image may contain sensitive content.']);
    const none = thrown(() => readArkImages(answer(200, { data: [], usage: { generated_images: 0 } }), { n: 1 }, 'ark'));
    expect([none.status, none.code, none.kind]).to.deep.equal([502, 'no_images', 'protocol']);
    const notJson = thrown(() => readArkImages(answer(200, '<html>'), { n: 1 }, 'ark'));
    expect(notJson.status).to.equal(502);
  });

  it("maps Ark's error answers: its code and message, its Retry-After, and never its words on the gateway's key", () => {
    const invalid = thrown(() => readArkImages(answer(400, DOCUMENTED_INVALID_SIZE), { n: 1 }, 'ark'));
    expect([invalid.status, invalid.code, invalid.message]).to.deep.equal([400, 'InvalidParameter', DOCUMENTED_INVALID_SIZE.error.message]);
    const limited = thrown(() =>
      readArkImages(answer(429, { error: { code: 'RateLimitExceeded.EndpointRPMExceeded', message: 'Too many requests.', param: '', type: 'TooManyRequests' } }, { 'retry-after': '3' }), { n: 1 }, 'ark'),
    );
    expect([limited.status, limited.code, limited.retryAfter]).to.deep.equal([429, 'RateLimitExceeded.EndpointRPMExceeded', '3']);
    const key = thrown(() =>
      readArkImages(answer(401, { error: { code: 'AuthenticationError', message: 'The API key ak-123 is invalid.', param: '', type: 'Unauthorized' } }), { n: 1 }, 'ark'),
    );
    expect([key.status, key.code]).to.deep.equal([401, 'upstream_auth_failed']);
    expect(key.message).to.not.include('ak-123');
    const internal = thrown(() => readArkImages(answer(500, { error: { code: 'InternalServiceError', message: 'internal', param: '', type: 'InternalServiceError' } }), { n: 1 }, 'ark'));
    expect([internal.status, internal.code]).to.deep.equal([500, 'InternalServiceError']);
  });
});
