import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { Catalog, DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { ApiError } from '../../src/http/errors';
import { imageCall, normalizeImageRequest, parseImageRequest } from '../../src/media-tasks/images/request';
import { openAiImageRequest as openAiWireRequest } from '../../src/upstreams/openai/images';
import { IMAGE_OPTION_VALUES, IMAGE_OPTIONS, imageModelType } from '../../src/media-tasks/model-types';
import { ALL_MODEL_TYPES } from '../../src/model-types';
import { OPENAI_OPENAPI_PATH, openAiSchemaErrors } from '../support/openai-schema';

type Property = { enum?: unknown[]; type?: string };
const openAiImageRequest = (JSON.parse(readFileSync(OPENAI_OPENAPI_PATH, 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, Property> }> } })
  .components.schemas['CreateImageRequest']!.properties;

/** The refusal `run` throws, as the client reads it. */
function refusal(run: () => unknown): { status: number; code: string; message: string; param: string | null | undefined } {
  try {
    run();
  } catch (err) {
    if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message, param: err.options.param };
    throw err;
  }
  throw new Error('expected a refusal');
}

describe("images: OpenAI's image options (quality, style, background, moderation, output_compression, user)", () => {
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const takesAll = catalog.get('image-tokens')!;
  const takesNone = catalog.get('image-5.0')!;
  /** A model taking only `style`, which no built-in model takes (only OpenAI's dall-e-3 does). */
  const takesStyle: ModelEntry = { ...takesNone, id: 'image-styled', capabilities: { ...(takesNone.capabilities as object), options: { style: ['natural'] } } };
  const request = (model: ModelEntry, extra: Record<string, unknown>, mode: 'sync' | 'async' = 'sync') =>
    normalizeImageRequest(model, parseImageRequest({ model: model.id, prompt: 'a lighthouse', ...extra }), mode);
  /** A value of each option that OpenAI's API and image-tokens both take. */
  const accepted = { quality: 'high', background: 'transparent', moderation: 'low', output_compression: 80, user: 'end-user-7' } as const;

  it("are OpenAI's: the values of each enumerated option are those of CreateImageRequest, and every option is one of its fields", () => {
    for (const [option, values] of Object.entries(IMAGE_OPTION_VALUES)) expect(openAiImageRequest[option]?.enum, option).to.deep.equal([...values]);
    for (const option of IMAGE_OPTIONS) expect(openAiImageRequest, option).to.have.property(option);
    expect(openAiImageRequest['output_compression']!.type).to.equal('integer');
    expect(openAiImageRequest['user']!.type).to.equal('string');
  });

  it("are validated as OpenAI's CreateImageRequest validates them, where OpenAI's document says (generated values, both directions)", () => {
    const candidates: unknown[] = [
      ...new Set(Object.values(IMAGE_OPTION_VALUES).flat()),
      null,
      '',
      'ultra',
      'HD',
      -1,
      0,
      1,
      100,
      101,
      1.5,
      '80',
      true,
      [],
      {},
    ];
    const deviations: string[] = [];
    for (const option of IMAGE_OPTIONS) {
      for (const value of candidates) {
        const body = { model: 'image-tokens', prompt: 'a lighthouse', [option]: value };
        const gateway = (() => {
          try {
            parseImageRequest(structuredClone(body));
            return true;
          } catch {
            return false;
          }
        })();
        const openAi = openAiSchemaErrors('CreateImageRequest', body) === null;
        if (gateway !== openAi) deviations.push(`${option}: ${JSON.stringify(value)} ${gateway ? 'taken' : 'refused'}`);
      }
    }
    // Where the gateway knowingly differs from OpenAI's document: output_compression's bounds are in
    // its description only ("0-100%"); null is unset for every optional field, where the document
    // makes `user` not nullable (the rule: many clients send unset fields as null).
    expect(deviations).to.deep.equal(['output_compression: -1 refused', 'output_compression: 101 refused', 'user: null taken']);
  });

  it('travel to the provider as sent when the model takes them', () => {
    const normalized = request(takesAll, accepted);
    expect(normalized.options).to.deep.equal(accepted);
    expect(openAiWireRequest(imageCall(takesAll, normalized, 'b64_json')).body).to.deep.equal({
      model: 'image-tokens',
      prompt: 'a lighthouse',
      n: 1,
      size: '1024x1024',
      output_format: 'png',
      ...accepted,
      response_format: 'b64_json',
    });
    expect(openAiWireRequest(imageCall(takesAll, request(takesAll, accepted, 'async'), 'url')).body).to.deep.include(accepted);
    expect(imageCall(takesStyle, request(takesStyle, { style: 'natural' }), 'url').options).to.deep.equal({ style: 'natural' });
  });

  it('are refused naming the field, 400 unsupported_parameter, by a model whose catalog entry does not list them, whatever the value', () => {
    for (const [option, value] of Object.entries({ ...accepted, style: 'vivid' })) {
      expect(refusal(() => request(takesNone, { [option]: value })), option).to.deep.equal({
        status: 400,
        code: 'unsupported_parameter',
        message: `image-5.0 does not accept ${option}`,
        param: option,
      });
    }
    expect(refusal(() => request(takesAll, { style: 'natural' })).message).to.equal('image-tokens does not accept style');
    expect(refusal(() => request(takesStyle, { quality: 'auto' })).message).to.equal('image-styled does not accept quality');
  });

  it("refuse a value of OpenAI's the model does not take, listing the ones it does, as size and output_format do", () => {
    expect(refusal(() => request(takesAll, { quality: 'hd' }))).to.deep.equal({
      status: 400,
      code: 'unsupported_quality',
      message: 'image-tokens supports quality low, medium, high, auto',
      param: 'quality',
    });
    expect(refusal(() => request(takesStyle, { style: 'vivid' }))).to.deep.include({ code: 'unsupported_style', message: 'image-styled supports style natural', param: 'style' });
    // The rule size and output_format already followed, in the same words.
    expect(refusal(() => request(takesNone, { size: '512x512' }))).to.deep.include({ code: 'unsupported_size', param: 'size' });
    expect(refusal(() => request(catalog.get('image-4.5')!, { output_format: 'jpeg' }))).to.deep.equal({
      status: 400,
      code: 'unsupported_parameter',
      message: 'image-4.5 outputs JPEG only and does not accept output_format',
      param: 'output_format',
    });
  });

  it('null is unset: taken by every model, and nothing is sent', () => {
    const nulls = Object.fromEntries(IMAGE_OPTIONS.map((option) => [option, null]));
    for (const model of [takesAll, takesNone, takesStyle]) {
      const normalized = request(model, nulls);
      expect(normalized, model.id).not.to.have.property('options');
      expect(imageCall(model, normalized, 'url'), model.id).not.to.have.property('options');
    }
    expect(request(takesAll, { ...nulls, quality: 'low' }).options).to.deep.equal({ quality: 'low' });
  });

  it("a catalog lists only OpenAI's values, each option once", () => {
    const valid = (options: unknown) => imageModelType.capabilities({ ...(takesAll.capabilities as object), options });
    expect(valid({ quality: ['low'], style: ['vivid', 'natural'], output_compression: true, user: true })).to.equal(true);
    expect(valid({})).to.equal(true);
    for (const bad of [{ quality: ['ultra'] }, { quality: [] }, { quality: ['low', 'low'] }, { user: false }, { output_compression: [50] }, { seed: true }]) {
      expect(valid(bad), JSON.stringify(bad)).to.equal(false);
    }
  });
});
