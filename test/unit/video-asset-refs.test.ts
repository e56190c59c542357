import { expect } from 'chai';
import { ApiError } from '../../src/http/errors';
import { assetIdsOf, checkAssetRefs, checkAssetsOfOneChannel, type AssetRef, type ContentItem } from '../../src/video/request';

/** The video request's rule for asset:// images, on its own: which assets it names, and which it accepts. */

const content: ContentItem[] = [
  { type: 'text', text: 'a person waves' },
  { type: 'image_url', image_url: { url: 'asset://asset_a' }, role: 'reference_image' },
  { type: 'image_url', image_url: { url: 'https://example.com/frame.png' }, role: 'first_frame' },
  { type: 'image_url', image_url: { url: 'asset://asset_b' }, role: 'reference_image' },
];

function refusal(assets: Record<string, AssetRef | null>): { status: number; code: string; param: unknown } {
  try {
    checkAssetRefs(content, new Map(Object.entries(assets)));
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    const e = err as ApiError;
    return { status: e.status, code: e.code, param: e.options.param };
  }
  throw new Error('accepted');
}

describe('video requests: asset:// images', () => {
  it('finds the asset:// images by content index, and only those', () => {
    expect(assetIdsOf(content)).to.deep.equal([
      { index: 1, assetId: 'asset_a' },
      { index: 3, assetId: 'asset_b' },
    ]);
  });

  it('accepts active assets and answers their provider ids', () => {
    const active = (upstreamId: string): AssetRef => ({ status: 'active', upstreamId });
    expect(checkAssetRefs(content, new Map([['asset_a', active('up-a')], ['asset_b', active('up-b')]]))).to.deep.equal({ asset_a: 'up-a', asset_b: 'up-b' });
  });

  it('refuses an unknown (or another account\'s) asset and one not active, naming content[i].image_url', () => {
    const a: AssetRef = { status: 'active', upstreamId: 'up-a' };
    expect(refusal({ asset_a: a, asset_b: null })).to.deep.equal({ status: 400, code: 'invalid_asset', param: 'content[3].image_url' });
    expect(refusal({ asset_a: null, asset_b: a })).to.deep.equal({ status: 400, code: 'invalid_asset', param: 'content[1].image_url' });
    expect(refusal({ asset_a: a, asset_b: { status: 'processing', upstreamId: 'up-b' } })).to.deep.equal({ status: 400, code: 'asset_not_active', param: 'content[3].image_url' });
    expect(refusal({ asset_a: { status: 'failed', upstreamId: null }, asset_b: a })).to.deep.equal({ status: 400, code: 'asset_not_active', param: 'content[1].image_url' });
  });

  it('refuses assets made through two channels, naming the second, and takes those of one channel or of none recorded', () => {
    const on = (channel: string | null): AssetRef => ({ status: 'active', upstreamId: 'up', channel });
    const check = (a: AssetRef, b: AssetRef) => () => checkAssetsOfOneChannel(content, new Map([['asset_a', a], ['asset_b', b]]));
    expect(check(on('assets-a'), on('assets-a'))).not.to.throw();
    expect(check(on(null), on('assets-b'))).not.to.throw();
    try {
      check(on('assets-a'), on('assets-b'))();
      expect.fail('accepted');
    } catch (err) {
      const e = err as ApiError;
      expect([e.status, e.code, e.options.param]).to.deep.equal([400, 'assets_of_different_accounts', 'content[3].image_url']);
      expect(e.message).not.to.include('assets-');
    }
  });
});
