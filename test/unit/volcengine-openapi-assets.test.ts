import { expect } from 'chai';
import { isCredentialRefusal, UpstreamError } from '../../src/upstreams/errors';
import {
  createAssetRequest,
  createValidateSessionRequest,
  getAssetRequest,
  readAsset,
  readCreatedAsset,
  readValidateResult,
  readValidateSession,
  validateResultRequest,
} from '../../src/upstreams/volcengine-openapi/ark-assets';
import { wireAnswer as answer } from '../support/wire-answer';

/**
 * Ark's asset library and real-person verification Actions (src/upstreams/volcengine-openapi/):
 * the requests built and the answers read, from the references' own examples.
 */

function metadata(action: string): Record<string, string> {
  return { RequestId: '20260520164012E231B41B7575F3AB6642', Action: action, Version: '2024-01-01', Service: 'ark', Region: 'cn-beijing' };
}

function refusalOf(read: () => unknown): UpstreamError {
  try {
    read();
  } catch (err) {
    expect(err).to.be.instanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected the answer to be read as an error');
}

describe('Volcengine OpenAPI adapter: Ark asset library and real-person verification', () => {
  it('builds each Action as a signed-to-be POST to the root path with Action and Version in the query', () => {
    // new-api (relay/channel/task/doubao/virtual_portrait.go) posts `/?Action=…&Version=2024-01-01` with a JSON body.
    expect(createAssetRequest({ groupId: 'group-20260319072926-rrnmg', url: 'https://example.com/image.jpg' })).to.deep.equal({
      method: 'POST',
      path: '/',
      query: { Action: 'CreateAsset', Version: '2024-01-01' },
      body: { GroupId: 'group-20260319072926-rrnmg', URL: 'https://example.com/image.jpg', AssetType: 'Image' },
    });
    expect(getAssetRequest('asset-20260528140922-d9646')).to.deep.include({ query: { Action: 'GetAsset', Version: '2024-01-01' }, body: { Id: 'asset-20260528140922-d9646' } });
    expect(createValidateSessionRequest()).to.deep.include({ query: { Action: 'CreateVisualValidateSession', Version: '2024-01-01' }, body: {} });
    expect(validateResultRequest('20260520163328CC8B02B43817D1796643')).to.deep.include({
      query: { Action: 'GetVisualValidateResult', Version: '2024-01-01' },
      body: { BytedToken: '20260520163328CC8B02B43817D1796643' },
    });
  });

  it('reads a verification session and its result (the answers resellers quote verbatim, e.g. docs.easyrouter.io)', () => {
    const opened = answer(200, {
      ResponseMetadata: { ...metadata('CreateVisualValidateSession'), Region: 'ap-southeast-1' },
      Result: { BytedToken: '20260521162915BF9DC22A7A65ADF905D8', CallbackURL: 'https://easyrouter.io/v1/callback', H5Link: 'https://kyc.byteintl.com/?configId=8f0851cb&bytedToken=20260521162915BF9DC22A7A65ADF905D8' },
    });
    expect(readValidateSession(opened, 'assets')).to.deep.equal({
      token: '20260521162915BF9DC22A7A65ADF905D8',
      pageUrl: 'https://kyc.byteintl.com/?configId=8f0851cb&bytedToken=20260521162915BF9DC22A7A65ADF905D8',
    });
    const verified = answer(200, { ResponseMetadata: metadata('GetVisualValidateResult'), Result: { GroupId: 'group-20260520163350-ctpqc' } });
    expect(readValidateResult(verified, 'assets')).to.deep.equal({ state: 'verified', groupId: 'group-20260520163350-ctpqc' });
    expect(readValidateResult(answer(200, { ResponseMetadata: metadata('GetVisualValidateResult'), Result: {} }), 'assets')).to.deep.equal({ state: 'pending' });
    const incomplete = refusalOf(() => readValidateSession(answer(200, { ResponseMetadata: metadata('CreateVisualValidateSession'), Result: { BytedToken: 'x' } }), 'assets'));
    expect(incomplete).to.deep.include({ status: 502, kind: 'protocol' });
  });

  it('reads a created asset and every asset status (the examples of new-api and the reseller pages)', () => {
    expect(readCreatedAsset(answer(200, { ResponseMetadata: metadata('CreateAsset'), Result: { Id: 'asset-20260320120147-pqwhc' } }), 'assets')).to.equal('asset-20260320120147-pqwhc');
    const asset = (status: string, extra: Record<string, unknown> = {}) =>
      answer(200, {
        ResponseMetadata: metadata('GetAsset'),
        Result: {
          Id: 'asset-20260528140922-d9646',
          Name: 'character-reference',
          URL: 'https://ark-media-asset.tos-cn-beijing.volces.com/x',
          AssetType: 'Image',
          GroupId: 'group-20260528140601-tp9hw',
          Status: status,
          ProjectName: 'default',
          CreateTime: '2026-05-28T06:09:22Z',
          UpdateTime: '2026-05-28T06:09:31Z',
          ...extra,
        },
      });
    expect(readAsset(asset('Processing'), 'assets')).to.deep.equal({ status: 'processing' });
    expect(readAsset(asset('Active'), 'assets')).to.deep.equal({ status: 'active' });
    expect(readAsset(asset('Failed', { Error: { Code: 'FaceMismatch', Message: 'Face consistency verification failed.' } }), 'assets')).to.deep.equal({
      status: 'failed',
      error: { code: 'FaceMismatch', message: 'Face consistency verification failed.' },
    });
    expect(readAsset(asset('Failed'), 'assets')).to.deep.include({ status: 'failed', error: { code: 'asset_processing_failed', message: 'the provider could not process the image' } });
    expect(readAsset(asset('Inactive'), 'assets')).to.deep.include({ status: 'failed' });
    expect(refusalOf(() => readAsset(asset('Exploded'), 'assets'))).to.deep.include({ status: 502, kind: 'protocol' });
  });

  it("maps the provider's errors: the request's refusal with its Code and status, credentials as the gateway's own refusal", () => {
    // The error answer of https://www.volcengine.com/docs/6499/1125371.
    const notFound = refusalOf(() =>
      readAsset(answer(404, { ResponseMetadata: { ...metadata('GetUserById'), Error: { Code: 'InvalidActionOrVersion', Message: 'Could not find operation GetUserById for version 2022-05-12' } } }), 'assets'),
    );
    expect(notFound).to.deep.include({ status: 404, code: 'InvalidActionOrVersion', message: 'Could not find operation GetUserById for version 2022-05-12', kind: 'http' });
    // An Error in a 2xx answer is an error all the same (new-api reads ResponseMetadata.Error whatever the status): the provider's failure.
    expect(refusalOf(() => readCreatedAsset(answer(200, { ResponseMetadata: { ...metadata('CreateAsset'), Error: { Code: 'InternalError', Message: 'oops' } } }), 'assets'))).to.deep.include({ status: 502, code: 'InternalError' });
    // The common errors of https://www.volcengine.com/docs/6369/68677: the provider's message quotes the key; it is not passed on.
    for (const [status, code] of [[401, 'InvalidAccessKey'], [401, 'SignatureDoesNotMatch'], [400, 'InvalidTimestamp'], [403, 'AccessDenied']] as const) {
      const err = refusalOf(() => readAsset(answer(status, { ResponseMetadata: { ...metadata('GetAsset'), Error: { Code: code, Message: 'The accesskey [AKLTsecretish] included in the request is invalid.' } } }), 'assets'));
      expect(isCredentialRefusal(err), code).to.equal(true);
      expect(err.code, code).to.equal('upstream_auth_failed');
      expect(err.message, code).to.not.include('AKLT');
    }
    const throttled = refusalOf(() => readAsset(answer(429, { ResponseMetadata: { ...metadata('GetAsset'), Error: { Code: 'FlowLimitExceeded', Message: 'slow down' } } }, { 'retry-after': '3' }), 'assets'));
    expect(throttled).to.deep.include({ status: 429, code: 'FlowLimitExceeded', retryAfter: '3' });
    // A body not in the OpenAPI's format (a proxy's page) is not echoed: its status and content type.
    expect(refusalOf(() => readAsset(answer(502, '<html>bad gateway</html>', { 'content-type': 'text/html' }), 'assets'))).to.deep.include({ status: 502, message: 'channel assets: the provider answered HTTP 502 (text/html) without an error it documents' });
    expect(refusalOf(() => readAsset(answer(200, 'not json'), 'assets'))).to.deep.include({ status: 502, kind: 'protocol' });
    expect(refusalOf(() => readAsset(answer(200, { ResponseMetadata: metadata('GetAsset') }), 'assets'))).to.deep.include({ status: 502, kind: 'protocol' });
  });
});
