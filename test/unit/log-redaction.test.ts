import { expect } from 'chai';
import { censored, createLogger, REDACTED } from '../../src/log';

describe('log redaction', () => {
  function logged(write: (logger: ReturnType<typeof createLogger>) => void): Record<string, unknown>[] {
    const lines: string[] = [];
    write(createLogger('info', { write: (line: string) => void lines.push(line) }));
    return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  it('censors a credential member at any depth, in objects and arrays, whatever its case', () => {
    const [line] = logged((logger) =>
      logger.info({ req: { headers: { Authorization: 'Bearer sk-1', host: 'h' } }, list: [{ api_key: 'sk-2' }, { name: 'n' }], a: { b: { c: { secretAccessKey: 'S3' } } }, key: 'k' }, 'x'),
    );
    expect(line).to.deep.include({ req: { headers: { Authorization: REDACTED, host: 'h' } }, list: [{ api_key: REDACTED }, { name: 'n' }], a: { b: { c: { secretAccessKey: REDACTED } } }, key: REDACTED });
    expect(JSON.stringify(line)).not.to.match(/sk-1|sk-2|S3/);
  });

  it("censors a podcast channel's handshake credentials (Volcengine speech's access token and API key headers)", () => {
    const [line] = logged((logger) => logger.info({ channel: { headers: { 'X-Api-App-Id': 'app-1', 'X-Api-Access-Key': 'tok-1', 'x-api-key': 'key-1' } } }, 'x'));
    expect(line).to.deep.include({ channel: { headers: { 'X-Api-App-Id': 'app-1', 'X-Api-Access-Key': REDACTED, 'x-api-key': REDACTED } } });
    expect(JSON.stringify(line)).not.to.match(/tok-1|key-1/);
  });

  it("censors a child logger's bindings", () => {
    const [line] = logged((logger) => logger.child({ requestId: 'r1', apiKey: 'sk-3' }).info('x'));
    expect(line).to.include({ requestId: 'r1', apiKey: REDACTED });
  });

  it('leaves the logged object as it was, and copies nothing when there is nothing to censor', () => {
    const plain = { req: { method: 'POST', headers: { host: 'h' } }, ids: ['a', 'b'] };
    expect(censored(plain)).to.equal(plain);
    const secret = { outer: { password: 'p', keep: 1 }, other: { x: 1 } };
    const result = censored(secret);
    expect(result).to.deep.equal({ outer: { password: REDACTED, keep: 1 }, other: { x: 1 } });
    expect(secret.outer.password, 'the caller’s object is not changed').to.equal('p');
    expect(result.other, 'a branch without credentials is shared, not copied').to.equal(secret.other);
  });

  it('leaves errors to their serializer and stops at a depth no logged object reaches', () => {
    const [line] = logged((logger) => logger.error({ err: new Error('boom') }, 'x'));
    expect(line!.err).to.include({ type: 'Error', message: 'boom' });
    let deep: Record<string, unknown> = { password: 'p' };
    for (let i = 0; i < 20; i++) deep = { next: deep };
    expect(censored(deep)).to.equal(deep);
  });
});
