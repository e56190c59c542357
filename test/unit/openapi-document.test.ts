import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { validate, compileErrors } from '@readme/openapi-parser';
import Ajv2020 from 'ajv/dist/2020';
import { expect } from 'chai';
import { ajv as requestAjv, withComponents } from '../../src/http/validation';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { ROUTE_DOCS } from '../../src/openapi/registry';
import { CHECKED_IN_PATH, serializeOpenApiDocument } from '../../src/openapi/write';
import { testTempDir } from '../support/temp-dirs';

const ROOT = path.join(__dirname, '..', '..');

/** A typed client over the generated `paths`: right calls compile, wrong ones must not. */
const TYPED_CALLS = `
import type { components, paths } from './schema';

type JsonBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
type Json<Op, S extends number> = Op extends { responses: { [K in S]: { content: { 'application/json': infer R } } } } ? R : never;
type PostPath = { [P in keyof paths]: paths[P]['post'] extends { requestBody: unknown } ? P : never }[keyof paths];

declare function post<P extends PostPath, S extends number = 200>(path: P, body: JsonBody<paths[P]['post']>): Promise<Json<paths[P]['post'], S>>;

export async function calls(): Promise<string[]> {
  const completion = await post('/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'user', content: 'Hello' }], temperature: 0.5 });
  const video = await post('/v1/videos/generations', { model: 'video-2.5', content: [{ type: 'text', text: 'a kite' }], ratio: '16:9' });
  const minutes = await post('/v1/audio/minutes', { model: 'service-minutes', file_url: 'https://example.com/a.mp3', source_lang: 'en_us' });
  const credit = await post<'/admin/v1/accounts/{id}/credits', 201>('/admin/v1/accounts/{id}/credits', { amount: 100, reference: 'r1' });
  // @ts-expect-error messages is required
  await post('/v1/chat/completions', { model: 'chat-fast' });
  // @ts-expect-error a role the schema does not allow
  await post('/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'robot', content: 'x' }] });
  // @ts-expect-error a tool turn without the call it answers
  await post('/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'tool', content: 'x' }] });
  await post('/v1/chat/completions', { model: 'chat-fast', messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'x' }] });
  // @ts-expect-error a field the schema does not know
  await post('/v1/images/generations', { model: 'image-5.0', prompt: 'x', colour: 'red' });
  // @ts-expect-error GET-only path
  await post('/v1/models', {});

  const shapeB: paths['/v1/audio/minutes/{id}']['get']['responses'][404]['content']['application/json'] = { error: 'task not found', type: 'invalid_request_error' };
  const shapeA: paths['/v1/agent/risk/chat/completions']['post']['responses'][402]['content']['application/json'] = { error: { message: 'm', code: 'insufficient_balance' }, request_id: 'req_1' };
  const openai: components['schemas']['OpenAIError'] = { error: { message: 'm', type: 't', param: null, code: 'c' } };
  const fileId: paths['/v1/files/{id}']['get']['parameters']['path'] = { id: 'file_1' };
  return [completion.id, video.id, minutes.status, String(credit.amount), shapeB.type, shapeA.request_id, openai.error.code, fileId.id];
}
`;

describe('OpenAPI document', () => {
  const document = buildOpenApiDocument();

  it('is checked in as docs/openapi.json (run `npm run openapi:write` after changing a route’s documentation)', () => {
    expect(fs.readFileSync(CHECKED_IN_PATH, 'utf8')).to.equal(serializeOpenApiDocument());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).to.equal(true);
    expect(document.openapi).to.equal('3.1.0');
  });

  it('publishes the very schemas the handlers validate with, and examples they accept', () => {
    const schemas = (document.components as { schemas: Record<string, object> }).schemas;
    for (const [key, doc] of Object.entries(ROUTE_DOCS)) {
      if (!doc?.body) continue;
      expect(schemas[doc.body.name], key).to.equal(doc.body.schema);
      for (const [name, component] of Object.entries(doc.body.components ?? {})) expect(schemas[name], `${key}: ${name}`).to.equal(component);
      // The handlers' own ajv instance (which fills defaults in place, hence the copy).
      const valid = requestAjv.validate(withComponents(doc.body.schema, doc.body.components ?? {}), structuredClone(doc.body.example));
      expect(valid, `${key} example: ${requestAjv.errorsText()}`).to.equal(true);
    }
  });

  it('gives response examples that satisfy their schemas', () => {
    const ajv = new Ajv2020({ strict: false });
    const { components } = document as { components: { schemas: object; responses: Record<string, { content: object }> } };
    // Each schema is checked within the document, so its $refs to components resolve.
    const satisfies = (schema: object, example: unknown) => ajv.validate({ ...schema, components: { schemas: components.schemas } }, example);
    const answers = [
      ...Object.entries(components.responses),
      ...Object.entries(document.paths as Record<string, Record<string, { responses: Record<string, { content?: object }> }>>).flatMap(([p, methods]) =>
        Object.entries(methods).flatMap(([m, op]) => Object.entries(op.responses).map(([status, r]): [string, { content?: object }] => [`${m} ${p} ${status}`, r])),
      ),
    ];
    let checked = 0;
    for (const [name, answer] of answers) {
      for (const { schema, example } of Object.values(answer.content ?? {}) as { schema: object; example?: unknown }[]) {
        if (example === undefined) continue;
        expect(satisfies(schema, example), `${name}: ${ajv.errorsText()}`).to.equal(true);
        checked++;
      }
    }
    expect(checked).to.be.greaterThan(20);
  });

  it('documents the SSE answers of the streaming endpoints as text/event-stream', () => {
    const paths = document.paths as Record<string, Record<string, any>>;
    for (const p of ['/v1/chat/completions', '/v1/responses', '/v1/agent/risk/chat/completions', '/v1/agent/chat/completions']) {
      expect(Object.keys(paths[p]!.post.responses['200'].content), p).to.include('text/event-stream');
    }
  });

  it('generates TypeScript types (openapi-typescript) that type-check calls and refuse wrong ones', function () {
    this.timeout(120_000);
    const dir = testTempDir('openapi-types-');
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'), CHECKED_IN_PATH, '-o', path.join(dir, 'schema.d.ts')], { stdio: 'pipe' });
    fs.writeFileSync(path.join(dir, 'calls.ts'), TYPED_CALLS);
    const tsc = path.join(ROOT, 'node_modules/typescript-native/bin/tsc');
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'commonjs', '--lib', 'es2022', path.join(dir, 'calls.ts')];
    try {
      execFileSync(process.execPath, [tsc, ...args], { stdio: 'pipe', cwd: dir });
    } catch (err) {
      const out = err as { stdout?: Buffer; stderr?: Buffer };
      expect.fail(`tsc failed:\n${out.stdout?.toString()}${out.stderr?.toString()}`);
    }
  });
});
