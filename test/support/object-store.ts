import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { CreateBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import type { Config } from '../../src/config';
import { removeTestTempDir, testTempDir } from './temp-dirs';

/**
 * s3rver knows one account, with the key pair S3RVER/S3RVER. It refuses an unknown access key but
 * checks no SigV4 signature (3.7.1's lib/middleware/authentication.js: "Signature version 4
 * calculation is unimplemented"), so a wrong secret goes unnoticed here. Each server adds a pair
 * of its own, so that a test can search logs and answers for a secret that appears nowhere else.
 */
function addKeyPair(): { accessKeyId: string; secretAccessKey: string } {
  const pair = { accessKeyId: `test-${randomBytes(6).toString('hex')}`, secretAccessKey: `s3-secret-${randomBytes(12).toString('hex')}` };
  // s3rver keeps its key pairs in this registry (lib/models/account.js): no option sets one.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DUMMY_ACCOUNT } = require('s3rver/lib/models/account') as { DUMMY_ACCOUNT: { createKeyPair(id: string, secret: string): void } };
  DUMMY_ACCOUNT.createKeyPair(pair.accessKeyId, pair.secretAccessKey);
  return pair;
}

/** An S3-compatible server for tests: s3rver, in this process, on an ephemeral port, its data in a temporary directory. */
export interface RunningObjectStore {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** The key pair of this server (s3rver checks the key id, not the signature); the secret appears nowhere else. */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** Where s3rver keeps its buckets (a folder per bucket). */
  readonly dir: string;
  /** A new empty bucket, made through the S3 API. */
  createBucket(name: string): Promise<void>;
  /** The gateway settings (FILE_STORE=s3 and the S3_* variables) that keep files in `bucket` here. */
  env(bucket: string): Record<string, string>;
  /** The multipart uploads begun in `bucket` and neither completed nor aborted. */
  unfinishedUploads(bucket: string): string[];
  close(): Promise<void>;
}

/**
 * Starts s3rver with the buckets named. s3rver 3.7 has no AbortMultipartUpload (it answers 405),
 * which a gateway must send when an upload fails: this server answers it as S3 does, dropping the
 * upload's parts, so a test can see that nothing was left behind.
 */
export async function startObjectStore(
  buckets: readonly string[] = [],
  /** Where it listens: loopback and a free port unless a test of several hosts (network namespaces) needs another address. */
  listen: { address?: string; port?: number } = {},
): Promise<RunningObjectStore> {
  const dir = testTempDir('object-store-');
  const host = listen.address ?? '127.0.0.1';
  const server = new S3rver({ address: host, port: listen.port ?? 0, directory: dir, silent: true, configureBuckets: buckets.map((name) => ({ name })) });
  const uploadsDir = (bucket: string): string => (server as unknown as S3rverInternals).store.getResourcePath(bucket, undefined, 'uploads');
  server.middleware.unshift(async (ctx: { method: string; path: string; query: Record<string, unknown>; status: number }, next: () => Promise<void>) => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string' || !/^[0-9a-f]+$/.test(uploadId)) return next();
    const bucket = decodeURIComponent(ctx.path.split('/')[1] ?? '');
    fs.rmSync(path.join(uploadsDir(bucket), uploadId), { recursive: true, force: true });
    ctx.status = 204;
  });
  const address = (await server.run()) as AddressInfo;
  // A server shared by a test process's gateways (sharedObjectStore) must not keep it alive.
  (server as unknown as S3rverInternals).httpServer.unref();
  const endpoint = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
  const credentials = addKeyPair();
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  return {
    endpoint,
    credentials,
    dir,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    env: (bucket) => ({
      FILE_STORE: 's3',
      S3_ENDPOINT: endpoint,
      S3_REGION: 'us-east-1',
      S3_BUCKET: bucket,
      S3_ACCESS_KEY_ID: credentials.accessKeyId,
      S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
      // The least S3 allows, so that a test of a few MB makes a multipart upload.
      S3_PART_BYTES: String(5 * 1_048_576),
    }),
    unfinishedUploads(bucket) {
      const uploads = uploadsDir(bucket);
      return fs.existsSync(uploads) ? fs.readdirSync(uploads) : [];
    },
    async close() {
      client.destroy();
      await server.close();
      removeTestTempDir(dir);
    },
  };
}

interface S3rverInternals {
  readonly store: { getResourcePath(bucket: string, key: string | undefined, resource: string): string };
  readonly httpServer: import('node:http').Server;
}

let shared: Promise<RunningObjectStore> | null = null;
let buckets = 0;

/** One s3rver for all the gateways of this test process, started at the first call. */
function sharedObjectStore(): Promise<RunningObjectStore> {
  shared ??= startObjectStore();
  return shared;
}

/**
 * The file store settings of a test gateway: none (DATA_DIR/files) unless TEST_FILE_STORE=s3, which
 * runs the file suites against s3rver (`npm run test:s3`): then a bucket of its own for each data
 * directory, so that gateways see each other's files exactly when they would on a local disk.
 */
const bucketOfDataDir = new Map<string, string>();
export async function testFileStoreEnv(dataDir: string): Promise<Record<string, string>> {
  const kind = process.env.TEST_FILE_STORE ?? 'local';
  if (kind === 'local') return {};
  if (kind !== 's3') throw new Error(`TEST_FILE_STORE must be local or s3, got ${kind}`);
  const store = await sharedObjectStore();
  let bucket = bucketOfDataDir.get(dataDir);
  if (!bucket) {
    bucket = `test-${process.pid}-${++buckets}`;
    await store.createBucket(bucket);
    bucketOfDataDir.set(dataDir, bucket);
  }
  return store.env(bucket);
}

/** The keys a gateway's file store holds under `prefix` (such as 'uploads/'), read from the store itself. */
export async function storedKeys(config: Config, prefix: string): Promise<string[]> {
  const settings = config.fileStore;
  if (settings.kind === 'local') {
    const root = path.join(config.dataDir, 'files');
    const dir = path.join(root, prefix);
    if (!fs.existsSync(dir)) return [];
    return (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
      .sort();
  }
  const client = new S3Client({ endpoint: settings.endpoint, region: settings.region, forcePathStyle: settings.forcePathStyle, credentials: settings.credentials });
  try {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(new ListObjectsV2Command({ Bucket: settings.bucket, Prefix: settings.keyPrefix + prefix, ContinuationToken: token }));
      keys.push(...(page.Contents ?? []).map((object) => object.Key!.slice(settings.keyPrefix.length)));
      token = page.NextContinuationToken;
    } while (token);
    return keys.sort();
  } finally {
    client.destroy();
  }
}
