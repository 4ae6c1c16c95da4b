/** A stored recording: its size, and a reader of a byte range (inclusive, as HTTP Range counts). */
export interface StoredRecording {
  size: number;
  read(start: number, end: number): AsyncIterable<Uint8Array>;
}

/** One recording uploaded in parts while its call runs (S3 multipart: parts of at least 5 MiB but the last). */
export interface MultipartUpload {
  readonly uploadId: string;
  uploadPart(partNumber: number, body: Buffer): Promise<void>;
  /** Join the parts uploaded so far, in part-number order, into the recording. */
  complete(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * Where finished call recordings are kept (docs/house-rules.md rule 7: two real implementations, disk and an
 * S3-compatible bucket, one contract suite in test/voice/recording-store/contract.ts). A recording is one WAV per
 * voice session; the store never sees a call in progress.
 */
export interface RecordingStore {
  readonly kind: 'disk' | 's3';
  /**
   * Keep the finished WAV at `localPath` as the recording of `sessionId`. Once this resolves the recording is stored
   * and the local file is gone; when it throws, the local file is left where it was (nothing lost, try again).
   */
  put(sessionId: string, localPath: string): Promise<void>;
  /** The recording of a session, or null when none is stored. Throws a 503 error when the store does not answer. */
  open(sessionId: string): Promise<StoredRecording | null>;
  /**
   * Stores that take a recording in parts while its call runs (the bucket) have this; the others get the finished WAV
   * through {@link put}.
   */
  beginMultipart?(sessionId: string): Promise<MultipartUpload>;
  /** Delete a session's recording; true when there was one. */
  remove(sessionId: string): Promise<boolean>;
  /** The session ids of every stored recording (for the sweep of deleted conversations). */
  list(): Promise<string[]>;
  /**
   * Abort multipart uploads begun before `before` and left unfinished (an instance died mid-call or mid-upload),
   * except those of the sessions `keep` answers for (a call still running anywhere, an upload going on here). How many
   * were aborted, or 'unsupported' when the server does not list uploads (a bucket lifecycle rule must then clean them
   * up). The disk store has none.
   */
  abortStaleUploads(
    before: Date,
    keep: (sessionIds: string[]) => Promise<ReadonlySet<string>>,
  ): Promise<number | 'unsupported'>;
  /** Whether the store answers (/readyz), within the signal's deadline. */
  check(signal: AbortSignal): Promise<void>;
  /** Release the store's connections (shutdown). */
  close(): void;
}
