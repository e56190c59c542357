import { expect } from 'chai';
import OpenAI from 'openai';
import type { ImageGenerateParamsNonStreaming as ImageGenerateParams } from 'openai/resources/images';
import { startSimulator, type RunningSimulator } from '../../simulator';
import { imageRoutes } from '../../simulator/images';
import { arkProvider } from '../../simulator/providers/ark';
import { mounted, mountPath } from '../../simulator/providers/provider';
import { arkImageRequest, readArkImages } from '../../src/upstreams/ark/images';
import { Channel } from '../../src/upstreams/channel';
import { arkPlaceholderKey } from '../support/simulated-ark';

const ARK_BASE_PATH = mountPath(arkProvider);

/**
 * The simulated Ark image generation speaks Ark's protocol (https://www.volcengine.com/docs/82379/1541523,
 * errors https://www.volcengine.com/docs/82379/1299023): Bearer key, Ark's request and answer
 * fields, its size and sequential rules, its error body. Ark's reference calls this endpoint with
 * the official OpenAI SDK (`base_url` the Ark base, Ark-only fields as extra body): so does this test.
 */
describe('upstream simulator: Ark image generation (Seedream)', () => {
  let sim: RunningSimulator;
  let ark: OpenAI;
  before(async () => {
    sim = await startSimulator({ routes: [...imageRoutes(), ...mounted(arkProvider)] });
    ark = new OpenAI({ baseURL: `${sim.url}${ARK_BASE_PATH}`, apiKey: arkPlaceholderKey(), maxRetries: 0 });
  });
  after(async () => sim.close());

  /** OpenAI's image request with Ark's own fields, as Ark's reference passes them through the SDK. */
  type ArkParams = ImageGenerateParams & Record<string, unknown>;
  const generate = (params: ArkParams) => ark.images.generate(params as ImageGenerateParams);
  const refusal = async (params: ArkParams, client = ark): Promise<InstanceType<typeof OpenAI.APIError>> => {
    try {
      await client.images.generate(params as ImageGenerateParams);
    } catch (err) {
      expect(err).to.be.instanceOf(OpenAI.APIError);
      return err as InstanceType<typeof OpenAI.APIError>;
    }
    return expect.fail('expected a refusal');
  };

  it("answers the official OpenAI SDK as Ark does: data with url and size, usage with generated_images and Ark's token count", async () => {
    const result = await generate({ model: 'doubao-seedream-4-5-251128', prompt: 'a lighthouse', size: '2048x2048', response_format: 'url', watermark: false });
    expect(result.data).to.have.length(1);
    expect(result.data![0]).to.have.all.keys('url', 'size');
    expect(result.data![0]).to.include({ size: '2048x2048' });
    expect((await fetch(result.data![0]!.url!)).headers.get('content-type')).to.equal('image/jpeg');
    expect(result.usage).to.deep.equal({ generated_images: 1, output_tokens: (2048 * 2048) / 256, total_tokens: (2048 * 2048) / 256 });
    // A resolution instead of WxH; b64_json; the model's own id in the answer.
    const inline = (await generate({ model: 'doubao-seedream-5-0-260128', prompt: 'x', size: '3K', response_format: 'b64_json', output_format: 'png' })) as unknown as {
      model: string;
      data: { b64_json: string; size: string }[];
    };
    expect(inline.model).to.equal('doubao-seedream-5-0-260128');
    expect(inline.data[0]!.size).to.equal('3072x3072');
    expect(Buffer.from(inline.data[0]!.b64_json, 'base64').subarray(1, 4).toString()).to.equal('PNG');
  });

  it('makes a sequential generation: up to max_images, as many as the prompt says ([sim:count]), a refused image as its error item', async () => {
    const all = await generate({ model: 'doubao-seedream-4-0-250828', prompt: 'four seasons', size: '1280x720', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 4 } });
    expect(all.data).to.have.length(4);
    const fewer = await generate({ model: 'doubao-seedream-4-0-250828', prompt: 'four seasons [sim:count=2]', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 4 } });
    expect(fewer.data).to.have.length(2);
    expect((fewer.usage as unknown as { generated_images: number }).generated_images).to.equal(2);
    const refused = await generate({ model: 'doubao-seedream-4-0-250828', prompt: 'four seasons [sim:refuse=1]', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 3 } });
    expect(refused.data!.map((d) => Object.keys(d).sort().join())).to.deep.equal(['size,url', 'error', 'size,url']);
    expect((refused.usage as unknown as { generated_images: number }).generated_images).to.equal(2);
    // disabled (the default) makes one image, whatever max_images says.
    expect((await generate({ model: 'doubao-seedream-4-0-250828', prompt: 'one', sequential_image_generation_options: { max_images: 4 } })).data).to.have.length(1);
  });

  it("refuses as Ark does: a wrong key (401 AuthenticationError), a size under the model's minimum pixels, output_format where the model has none, an unknown model", async () => {
    const wrongKey = await refusal({ model: 'doubao-seedream-4-5-251128', prompt: 'x' }, new OpenAI({ baseURL: `${sim.url}${ARK_BASE_PATH}`, apiKey: 'not-the-key', maxRetries: 0 }));
    expect(wrongKey.status).to.equal(401);
    expect(wrongKey.error).to.deep.include({ code: 'AuthenticationError', type: 'Unauthorized' });
    const cases: [ArkParams, number, string, string][] = [
      // 1500x1500 and 800x800 are the reference's own examples of sizes below the minimum (4.5 and 4.0).
      [{ model: 'doubao-seedream-4-5-251128', prompt: 'x', size: '1500x1500' as ArkParams['size'] }, 400, 'InvalidParameter', 'size'],
      [{ model: 'doubao-seedream-4-0-250828', prompt: 'x', size: '800x800' as ArkParams['size'] }, 400, 'InvalidParameter', 'size'],
      [{ model: 'doubao-seedream-4-5-251128', prompt: 'x', size: '1K' as ArkParams['size'] }, 400, 'InvalidParameter', 'size'],
      [{ model: 'doubao-seedream-4-0-250828', prompt: 'x', size: '8200x500' as ArkParams['size'] }, 400, 'InvalidParameter', 'size'],
      [{ model: 'doubao-seedream-4-5-251128', prompt: 'x', output_format: 'png' }, 400, 'InvalidParameter', 'output_format'],
      [{ model: 'doubao-seedream-4-5-251128', prompt: 'x', sequential_image_generation: 'auto', sequential_image_generation_options: { max_images: 16 } }, 400, 'InvalidParameter', 'sequential_image_generation_options.max_images'],
      [{ model: 'doubao-seedream-9-9', prompt: 'x' }, 404, 'InvalidEndpointOrModel.NotFound', ''],
    ];
    for (const [params, status, code, param] of cases) {
      const err = await refusal(params);
      expect(err.status, JSON.stringify(params)).to.equal(status);
      expect(err.error, JSON.stringify(params)).to.deep.include({ code, param });
      expect((err.error as { message: string }).message).to.match(/Request id: \d+[0-9a-f]+$/);
    }
    // The reference's valid examples: 3750x1250 (4.5) and 1600x600 (4.0).
    expect((await generate({ model: 'doubao-seedream-4-5-251128', prompt: 'x', size: '3750x1250' as ArkParams['size'] })).data).to.have.length(1);
    expect((await generate({ model: 'doubao-seedream-4-0-250828', prompt: 'x', size: '1600x600' as ArkParams['size'] })).data).to.have.length(1);
  });

  it("is what the gateway's adapter speaks: its request is taken and its reader reads the answer, over a Bearer channel", async () => {
    const channel = new Channel({ name: 'ark-images', protocol: 'ark', base_url: `${sim.url}${ARK_BASE_PATH}`, auth: { kind: 'bearer', apiKey: arkPlaceholderKey() }, timeout_ms: 10_000, max_concurrency: 4 });
    try {
      const call = { model: 'image-5.0-pro', prompt: 'a layered poster [sim:count=1]', n: 3, width: 2048, height: 2048, outputFormat: 'jpeg', responseFormat: 'url' } as const;
      const read = readArkImages(await channel.call(arkImageRequest(call)), call, channel.name);
      expect(read.images).to.have.length(1);
      expect(read.images[0]!.layers.map((l) => l.name)).to.deep.equal(['foreground', 'text']);
    } finally {
      await channel.close();
    }
  });
});
