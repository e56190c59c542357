// s3rver ships no types: the part of its API test/support/object-store.ts uses.
declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    directory: string;
    silent?: boolean;
    configureBuckets?: { name: string }[];
  }

  /** A Koa application: `middleware` is Koa's list, composed when the server starts. */
  class S3rver {
    constructor(options: S3rverOptions);
    middleware: ((ctx: any, next: () => Promise<void>) => Promise<void> | void)[];
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
  export = S3rver;
}
