import { createServer, type AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { scratchDir } from '../../helpers/scratch.js';

export interface TestBucketServer {
  endpoint: string;
  bucket: string;
  /** Stop it now (a bucket that goes down); teardown stops it otherwise. */
  close?: () => Promise<void>;
}

/** A real S3-compatible server (s3rver) on loopback, port 0, in a scratch directory, with one bucket; closed on teardown. */
export async function startS3rver(t: Test, bucket = 'recordings'): Promise<TestBucketServer> {
  // s3rver ships no types: this is the part of its API the tests use.
  const name = 's3rver';
  const { default: S3rver } = (await import(name)) as {
    default: new (options: object) => { run(): Promise<AddressInfo>; close(): Promise<void> };
  };
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory: scratchDir('parley-s3rver-'),
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  const address = await server.run();
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= server.close());
  t.teardown(close);
  return { endpoint: `http://127.0.0.1:${address.port}`, bucket, close };
}

/** An address nothing listens on (a bucket that is down): bound, then closed. */
export async function deadEndpoint(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Options for an S3RecordingStore against it (s3rver accepts any key pair). */
export function s3Options(server: TestBucketServer, bucket = server.bucket) {
  return {
    endpoint: server.endpoint,
    region: 'us-east-1',
    bucket,
    prefix: 'calls/',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    // s3rver runs inside the test's own process: with the suite's other files on both cores, a client's first
    // request (the SDK loads its modules then) took over the 3 s production deadline. A bucket that is down still
    // fails at once (nothing listens), which is what the bounded-503 tests assert.
    requestDeadlineMs: 20_000,
  };
}
