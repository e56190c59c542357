import { expect } from 'chai';
import { protocolNamed } from '../../src/upstreams/protocols';
import { wireAnswer as answer } from '../support/wire-answer';

/** Each protocol's one error mapping (its `errorOf`): the provider's refusal becomes the gateway's UpstreamError. */
describe('provider error mappings (Protocol.errorOf)', () => {
  it('openai and ark: the `error` object’s message and code, Retry-After passed on; a credential refusal hides the provider’s words', () => {
    for (const name of ['openai', 'ark']) {
      const p = protocolNamed(name);
      const limited = p.errorOf(answer(429, { error: { message: 'slow down', code: 'rate_limit_exceeded' } }, { 'retry-after': '2' }), 'c');
      expect(limited).to.include({ status: 429, message: 'slow down', code: 'rate_limit_exceeded', retryAfter: '2' });
      const sensitive = p.errorOf(answer(400, { error: { code: 'InputImageSensitiveContentDetected.PrivacyInformation', message: 'privacy', type: 'BadRequest' } }), 'c');
      expect(sensitive).to.include({ status: 400, code: 'InputImageSensitiveContentDetected.PrivacyInformation' });
      const refused = p.errorOf(answer(401, { error: { message: 'key sk-abc… is wrong' } }), 'c');
      expect(refused).to.include({ status: 401, code: 'upstream_auth_failed' });
      expect(refused.message).not.to.include('sk-abc');
      // Not the provider's error format: its status and content type, never its body.
      expect(p.errorOf(answer(502, '<html>Bad Gateway at 10.0.0.7, request Authorization: Bearer sk-x</html>', { 'content-type': 'text/html; charset=utf-8' }), 'c')).to.include({
        status: 502,
        code: null,
        message: 'channel c: the provider answered HTTP 502 (text/html) without an error it documents',
      });
    }
  });

  it('every protocol answers an error body not in its format by status and content type alone, echoing none of it', () => {
    const page = answer(503, 'upstream connect error: 10.1.2.3:443 token=pat_secret', { 'content-type': 'text/plain' });
    for (const name of ['openai', 'ark', 'coze', 'volcengine_openapi']) {
      const err = protocolNamed(name).errorOf(page, 'c');
      expect(err.message, name).to.equal('channel c: the provider answered HTTP 503 (text/plain) without an error it documents');
      expect(err.status, name).to.be.oneOf([502, 503]);
    }
    expect(protocolNamed('coze').errorOf(answer(404, 'not found'), 'c').message, 'no content type').to.equal('channel c: the provider answered HTTP 404 without an error it documents');
  });

  it('tingwu, tavily and bocha: a body not in their format (a page, plain text, JSON naming no error) is reported by status and content type, its text not echoed', () => {
    const bodies = [
      answer(503, '<html>upstream 10.1.2.3 Authorization: Bearer tvly-SECRET</html>', { 'content-type': 'text/html; charset=utf-8' }),
      answer(500, { trace: 'at 10.1.2.3 key=tvly-SECRET' }, { 'content-type': 'application/json' }),
    ];
    for (const name of ['tingwu', 'tavily', 'bocha']) {
      for (const body of bodies) {
        const err = protocolNamed(name).errorOf(body, 'c');
        expect(err.message, name).to.equal(`channel c: the provider answered HTTP ${body.status} (${body.headers['content-type']!.split(';')[0]}) without an error it documents`);
        expect(err.message, name).not.to.include('SECRET');
        expect(err.status, name).to.equal(body.status);
      }
    }
    // Their own error formats still give the provider's words.
    expect(protocolNamed('tavily').errorOf(answer(400, { detail: { error: 'Query is too long.' } }), 'c').message).to.equal('Query is too long.');
    expect(protocolNamed('bocha').errorOf(answer(400, { code: '400', message: 'Missing parameter query', log_id: 'l' }), 'c').message).to.equal('Missing parameter query');
    expect(protocolNamed('tingwu').errorOf(answer(400, { Code: 'BRK.InvalidLanguage', Message: 'Invalid language.' }), 'c').message).to.equal('Invalid language.');
  });

  it('minimax: v2’s error body by its type, and `base_resp` codes, also inside an HTTP 200 answer (details: minimax-video.test.ts)', () => {
    const p = protocolNamed('minimax');
    const v2 = (status: number, type: string) => answer(status, { type: 'error', error: { type, message: `${type} happened`, http_code: status }, request_id: 'r' });
    expect(p.errorOf(v2(400, 'bad_request_error'), 'c')).to.include({ status: 400, code: 'upstream_rejected', message: 'bad_request_error happened' });
    expect(p.errorOf(v2(401, 'authorized_error'), 'c')).to.include({ status: 401, code: 'upstream_auth_failed' });
    expect(p.errorOf(v2(429, 'rate_limit_error'), 'c')).to.include({ status: 429, code: 'upstream_rate_limited' });
    expect(p.errorOf(answer(200, { base_resp: { status_code: 1004, status_msg: 'authorized failed' } }), 'c')).to.include({ status: 401, code: 'upstream_auth_failed' });
    expect(p.errorOf(answer(200, { base_resp: { status_code: 1026, status_msg: 'sensitive' } }), 'c')).to.include({ status: 422, code: 'input_sensitive_content' });
    expect(p.errorOf(answer(500, { base_resp: { status_code: 1013, status_msg: 'internal' } }), 'c')).to.include({ status: 502, code: 'upstream_error' });
  });

  it('volcengine_openapi: `ResponseMetadata.Error`; a refused signature or key is a credential refusal', () => {
    const p = protocolNamed('volcengine_openapi');
    const meta = (Code: string, Message: string) => ({ ResponseMetadata: { RequestId: 'r', Error: { Code, Message } } });
    expect(p.errorOf(answer(401, meta('SignatureDoesNotMatch', 'no')), 'c')).to.include({ status: 401, code: 'upstream_auth_failed' });
    expect(p.errorOf(answer(400, meta('InvalidParameter', 'Name is required')), 'c')).to.include({ status: 400, code: 'InvalidParameter', message: 'Name is required' });
    expect(p.errorOf(answer(404, meta('NotFound.Asset', 'no such asset')), 'c')).to.include({ status: 404, code: 'NotFound.Asset' });
  });

  it('tingwu: `{RequestId, Code, Message}`; a refused signature, key or AppKey is a credential refusal whatever its status (details: tingwu-offline-tasks.test.ts)', () => {
    const p = protocolNamed('tingwu');
    const body = (Code: string, Message: string) => ({ RequestId: 'r', Code, Message });
    expect(p.errorOf(answer(404, body('InvalidAccessKeyId.NotFound', 'Specified access key is not found.')), 'c')).to.include({ status: 401, code: 'upstream_auth_failed' });
    expect(p.errorOf(answer(400, body('BRK.InvalidAppKey', 'Invalid app key.')), 'c')).to.include({ status: 401, code: 'upstream_auth_failed' });
    expect(p.errorOf(answer(400, body('BRK.InvalidLanguage', 'Invalid language.')), 'c')).to.include({ status: 400, code: 'BRK.InvalidLanguage', message: 'Invalid language.' });
    expect(p.errorOf(answer(500, body('ServerError', 'Server error.')), 'c')).to.include({ status: 500, code: 'ServerError' });
  });

  it('volcengine_podcast: a refused WebSocket handshake, its log id kept; a refused key is a credential refusal (the stream\'s codes: volcengine-podcast.test.ts)', () => {
    const p = protocolNamed('volcengine_podcast');
    const logid = { 'x-tt-logid': '2025041513355271DF5CF1A0AE0508E78C' };
    const refused = p.errorOf(answer(401, { error: 'token tok-SECRET… is invalid' }, logid), 'c');
    expect(refused).to.include({ status: 401, code: 'upstream_auth_failed' });
    expect(refused.message).not.to.include('tok-SECRET');
    expect(p.errorOf(answer(429, { error: 'too many' }, { 'retry-after': '3' }), 'c')).to.include({ status: 429, code: 'upstream_rate_limited', retryAfter: '3' });
    expect(p.errorOf(answer(400, { error: 'bad resource' }, logid), 'c')).to.include({
      status: 400,
      code: 'upstream_rejected',
      message: 'channel c refused the WebSocket with HTTP 400: {"error":"bad resource"} (logid 2025041513355271DF5CF1A0AE0508E78C)',
      // What a client is told: the status, not the channel's name nor the provider's body.
      clientMessage: 'the podcast provider refused the connection (HTTP 400)',
    });
    expect(p.errorOf(answer(503, 'busy'), 'c')).to.include({ status: 503, code: 'upstream_unavailable' });
  });
});
