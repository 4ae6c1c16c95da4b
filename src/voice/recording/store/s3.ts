import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { dependencyUnavailable } from '../../../errors/index.js';
import { SESSION_ID_PATTERN } from '../../session/session-id.js';
import type { MultipartUpload, RecordingStore, StoredRecording } from './types.js';

const WAV_SUFFIX = '.wav';
/** S3's smallest multipart part (except the last): 5 MiB. */
export const PART_BYTES = 5 * 1024 * 1024;
/** Playback and deletion must not hang on a bucket that stopped answering (docs/house-rules.md rule 18). */
const REQUEST_DEADLINE_MS = 3000;

export interface S3StoreOptions {
  endpoint?: string | undefined;
  region: string;
  bucket: string;
  prefix: string;
  forcePathStyle: boolean;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  /** How long one playback, listing or deletion request may take (3 s unless a test on a loaded machine says more). */
  requestDeadlineMs?: number | undefined;
}

/**
 * Recordings in an S3-compatible bucket: `<prefix><sessionId>.wav`. Uploads are multipart (lib-storage, parts of
 * 5 MiB, two in flight: bounded memory whatever the call's length); the local WAV is deleted only once the upload
 * completed. Checksums are sent only when an operation requires them, so servers without the newer checksum
 * headers accept the uploads.
 */
export class S3RecordingStore implements RecordingStore {
  readonly kind = 's3';
  private readonly client: S3Client;
  private readonly deadlineMs: number;

  constructor(private readonly options: S3StoreOptions) {
    this.deadlineMs = options.requestDeadlineMs ?? REQUEST_DEADLINE_MS;
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 2,
      requestHandler: { connectionTimeout: this.deadlineMs, requestTimeout: 30_000 },
    });
  }

  keyOf(sessionId: string): string {
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new Error('not a voice session id');
    return `${this.options.prefix}${sessionId}${WAV_SUFFIX}`;
  }

  async put(sessionId: string, localPath: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.options.bucket,
        Key: this.keyOf(sessionId),
        Body: createReadStream(localPath),
        ContentType: 'audio/wav',
      },
      partSize: PART_BYTES,
      queueSize: 2,
      leavePartsOnError: false,
    });
    await upload.done();
    await rm(localPath, { force: true });
  }

  /** A multipart upload of a recording written while its call runs (parts numbered from 1, any order). */
  async beginMultipart(sessionId: string): Promise<MultipartUpload> {
    const Bucket = this.options.bucket;
    const Key = this.keyOf(sessionId);
    const signal = () => ({ abortSignal: AbortSignal.timeout(30_000) });
    const created = await this.client.send(
      new CreateMultipartUploadCommand({ Bucket, Key, ContentType: 'audio/wav' }),
      signal(),
    );
    const UploadId = created.UploadId!;
    const etags = new Map<number, string>();
    return {
      uploadId: UploadId,
      uploadPart: async (partNumber, body) => {
        const done = await this.client.send(
          new UploadPartCommand({ Bucket, Key, UploadId, PartNumber: partNumber, Body: body }),
          signal(),
        );
        etags.set(partNumber, done.ETag!);
      },
      complete: async () => {
        const Parts = [...etags.entries()]
          .sort(([a], [b]) => a - b)
          .map(([PartNumber, ETag]) => ({ PartNumber, ETag }));
        await this.client.send(
          new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts } }),
          signal(),
        );
      },
      abort: async () => {
        await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId }), signal());
      },
    };
  }

  async open(sessionId: string): Promise<StoredRecording | null> {
    const Key = this.keyOf(sessionId);
    let size: number;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key }), {
        abortSignal: AbortSignal.timeout(this.deadlineMs),
      });
      size = head.ContentLength ?? 0;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw dependencyUnavailable('network', err);
    }
    return {
      size,
      read: (start, end) => this.read(Key, start, end),
    };
  }

  private async *read(Key: string, start: number, end: number): AsyncIterable<Uint8Array> {
    const got = await this.client.send(
      new GetObjectCommand({ Bucket: this.options.bucket, Key, Range: `bytes=${start}-${end}` }),
      { abortSignal: AbortSignal.timeout(this.deadlineMs) },
    );
    const body = got.Body as Readable | undefined;
    if (body === undefined) return;
    try {
      for await (const chunk of body) yield chunk as Uint8Array;
    } finally {
      body.destroy();
    }
  }

  async remove(sessionId: string): Promise<boolean> {
    const Key = this.keyOf(sessionId);
    const signal = () => ({ abortSignal: AbortSignal.timeout(this.deadlineMs) });
    let existed = true;
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key }), signal());
    } catch (err) {
      if (!isNotFound(err)) throw dependencyUnavailable('network', err);
      existed = false;
    }
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key }), signal());
    } catch (err) {
      throw dependencyUnavailable('network', err);
    }
    return existed;
  }

  async list(): Promise<string[]> {
    const ids: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.options.bucket,
          Prefix: this.options.prefix,
          ...(token !== undefined ? { ContinuationToken: token } : {}),
        }),
        { abortSignal: AbortSignal.timeout(this.deadlineMs * 4) },
      );
      for (const object of page.Contents ?? []) {
        const name = object.Key?.slice(this.options.prefix.length) ?? '';
        const id = name.endsWith(WAV_SUFFIX) ? name.slice(0, -WAV_SUFFIX.length) : '';
        if (SESSION_ID_PATTERN.test(id)) ids.push(id);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return ids;
  }

  async abortStaleUploads(
    before: Date,
    keep: (sessionIds: string[]) => Promise<ReadonlySet<string>>,
  ): Promise<number | 'unsupported'> {
    const signal = () => ({ abortSignal: AbortSignal.timeout(this.deadlineMs * 4) });
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.options.bucket,
            Prefix: this.options.prefix,
            ...(keyMarker !== undefined ? { KeyMarker: keyMarker } : {}),
            ...(uploadIdMarker !== undefined ? { UploadIdMarker: uploadIdMarker } : {}),
          }),
          signal(),
        );
      } catch (err) {
        if (isNotImplemented(err)) return 'unsupported';
        throw dependencyUnavailable('network', err);
      }
      const stale: Array<{ id: string; Key: string; UploadId: string }> = [];
      for (const upload of page.Uploads ?? []) {
        const name = upload.Key?.slice(this.options.prefix.length) ?? '';
        const id = name.endsWith(WAV_SUFFIX) ? name.slice(0, -WAV_SUFFIX.length) : '';
        if (!SESSION_ID_PATTERN.test(id) || upload.UploadId === undefined) continue;
        if (upload.Initiated === undefined || upload.Initiated >= before) continue;
        stale.push({ id, Key: upload.Key!, UploadId: upload.UploadId });
      }
      const kept = stale.length > 0 ? await keep(stale.map((u) => u.id)) : new Set<string>();
      for (const { id, Key, UploadId } of stale) {
        if (kept.has(id)) continue;
        await this.client.send(
          new AbortMultipartUploadCommand({ Bucket: this.options.bucket, Key, UploadId }),
          signal(),
        );
        aborted++;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    return aborted;
  }

  async check(signal: AbortSignal): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }), { abortSignal: signal });
  }

  /** Close the client's sockets (shutdown, tests). */
  close(): void {
    this.client.destroy();
  }
}

/** A server without an operation answers 501 NotImplemented (or 405 for a method it does not route). */
function isNotImplemented(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  return e?.name === 'NotImplemented' || status === 501 || status === 405;
}

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}
