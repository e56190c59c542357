import { expect } from 'chai';
import { Catalog, DEFAULT_CATALOG_FILE, type ModelEntry } from '../../src/billing/catalog';
import { ApiError } from '../../src/http/errors';
import { dimensionsOf, imageCall, normalizeImageRequest, parseImageRequest } from '../../src/media-tasks/images/request';
import { imageCapabilities } from '../../src/media-tasks/model-types';
import { ALL_MODEL_TYPES } from '../../src/model-types';

/** The catalog's sizes and minimum pixels of the image models, and the call the adapters get. */
describe('images: sizes, minimum pixels and the provider call', () => {
  const catalog = new Catalog(DEFAULT_CATALOG_FILE, ALL_MODEL_TYPES);
  const request = (model: ModelEntry, extra: Record<string, unknown>) => normalizeImageRequest(model, parseImageRequest({ model: model.id, prompt: 'a lighthouse', ...extra }), 'sync');

  it("lists for every model only sizes at least its minimum pixels (Ark's: 4.0 1280x720, 4.5 and 5.0 2560x1440)", () => {
    const minimums: Record<string, number | undefined> = {};
    for (const model of catalog.list('image')) {
      const caps = imageCapabilities(model);
      minimums[model.id] = caps.min_pixels;
      for (const size of caps.sizes) {
        const { width, height } = dimensionsOf(size);
        expect(width * height, `${model.id} ${size}`).to.be.at.least(caps.min_pixels ?? 1);
      }
    }
    expect(minimums).to.deep.include({ 'image-4.0': 921_600, 'image-4.5': 3_686_400, 'image-5.0': 3_686_400, 'image-5.0-pro': 3_686_400 });
  });

  it('refuses a listed size below the minimum with 400 unsupported_size, before anything is reserved', () => {
    const base = catalog.get('image-4.5')!;
    const model: ModelEntry = { ...base, id: 'image-small', capabilities: { ...(base.capabilities as object), sizes: ['1024x1024', '2048x2048'] } };
    let refusal: unknown;
    try {
      request(model, { size: '1024x1024' });
    } catch (err) {
      refusal = err;
    }
    expect(refusal).to.be.instanceOf(ApiError);
    expect(refusal).to.deep.include({ status: 400, code: 'unsupported_size' });
    expect((refusal as ApiError).message).to.equal('image-small generates at least 3686400 pixels (1024x1024 is 1048576)');
    expect(request(model, { size: '2048x2048' }).size).to.equal('2048x2048');
  });

  it("hands the adapter the provider's model, n, width and height, output_format only where the model takes it, the catalog's watermark", () => {
    const five = catalog.get('image-5.0')!;
    expect(imageCall(five, request(five, { n: 3, size: '2304x1728' }), 'url')).to.deep.equal({
      model: 'doubao-seedream-5-0-260128',
      prompt: 'a lighthouse',
      n: 3,
      width: 2304,
      height: 1728,
      outputFormat: 'png',
      responseFormat: 'url',
    });
    const four = catalog.get('image-4.0')!;
    expect(imageCall(four, request(four, {}), 'b64_json')).to.deep.include({ model: 'doubao-seedream-4-0-250828', outputFormat: null, width: 1024, height: 1024 });
    const unmarked: ModelEntry = { ...four, capabilities: { ...(four.capabilities as object), watermark: false } };
    expect(imageCall(unmarked, request(unmarked, {}), 'url')).to.deep.include({ watermark: false });
  });
});
