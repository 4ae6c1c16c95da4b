import type { Config } from '../../../config/index.js';
import { DiskRecordingStore } from './disk.js';
import { S3RecordingStore } from './s3.js';
import type { RecordingStore } from './types.js';

export { DiskRecordingStore } from './disk.js';
export { S3RecordingStore, PART_BYTES, type S3StoreOptions } from './s3.js';
export type { MultipartUpload, RecordingStore, StoredRecording } from './types.js';

type StoreConfig = Pick<
  Config,
  | 'RECORDINGS_STORE'
  | 'S3_ENDPOINT'
  | 'S3_REGION'
  | 'S3_BUCKET'
  | 'S3_PREFIX'
  | 'S3_FORCE_PATH_STYLE'
  | 'AWS_ACCESS_KEY_ID'
  | 'AWS_SECRET_ACCESS_KEY'
  | 'AWS_SESSION_TOKEN'
>;

/**
 * The store RECORDINGS_STORE names: disk under `dir` (the default), or the S3-compatible bucket. Without
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY the SDK's own credential chain applies (an instance role, for example).
 */
export function createRecordingStore(config: StoreConfig, dir: string): RecordingStore {
  if (config.RECORDINGS_STORE !== 's3') return new DiskRecordingStore(dir);
  const credentials =
    config.AWS_ACCESS_KEY_ID !== undefined && config.AWS_SECRET_ACCESS_KEY !== undefined
      ? {
          accessKeyId: config.AWS_ACCESS_KEY_ID,
          secretAccessKey: config.AWS_SECRET_ACCESS_KEY,
          ...(config.AWS_SESSION_TOKEN !== undefined ? { sessionToken: config.AWS_SESSION_TOKEN } : {}),
        }
      : undefined;
  return new S3RecordingStore({
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    bucket: config.S3_BUCKET!,
    prefix: config.S3_PREFIX,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    credentials,
  });
}
