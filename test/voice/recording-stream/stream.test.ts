import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import t from 'tap';
import { readWavHeader } from '../../../src/voice/index.js';
import { S3RecordingStore } from '../../../src/voice/recording/store/index.js';
import { StereoStream } from '../../../src/voice/recording/stereo-stream.js';
import { scratchDir } from '../../helpers/scratch.js';
import { waitFor } from '../helpers.js';
import { deadEndpoint, s3Options, startS3rver } from '../recording-store/s3rver.js';

/**
 * The stereo recording streamed to a real S3-compatible server (s3rver) while the call runs, fed directly (no real
 * time): a 60-minute μ-law call keeps memory flat and ends as one two-channel μ-law WAV as long as the call; a PCM16
 * call's channels line up on the call's clock across part boundaries; a bucket that is down makes the stream give up
 * (the recording is then built from disk, as test/voice/recording-store/app-s3.test.ts shows).
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function objectBytes(admin: S3Client, bucket: string, key: string, start: number, end: number) {
  const got = await admin.send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end}` }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

t.test('a 60-minute μ-law call: flat memory, one stereo object as long as the call', async (t) => {
  const server = await startS3rver(t);
  const store = new S3RecordingStore(s3Options(server));
  const admin = new S3Client(s3Options(server));
  t.teardown(() => (store.close(), admin.destroy()));
  let now = 0;
  const audio = { format: 'pcmu', sampleRateHz: 8000 } as const;
  const stream = new StereoStream(
    () => store.beginMultipart('vs_longcall'),
    audio,
    0,
    () => now,
  );
  const callerFrame = Buffer.alloc(160, 0x11); // 20 ms at 8 kHz, one byte a sample
  const assistantFrame = Buffer.alloc(160, 0x22);
  const memory = () => {
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  // The median reading of minutes 15 to 25 (once parts flow) against that of minutes 50 to 60 (the bucket server runs in this process
  // too, so single readings jump with its sockets): audio held in memory for the call's length would add 40 MB
  // between them; a bounded recorder (a part being filled, at most two on their way, part 1 on disk) adds none.
  const earlyReadings: number[] = [];
  const lateReadings: number[] = [];
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (let minute = 0; minute < 60; minute++) {
    for (let frame = 0; frame < 3000; frame++) {
      now = minute * 60_000 + frame * 20;
      stream.caller(callerFrame);
      // The assistant speaks in the odd minutes only: the even ones are silence on the right.
      if (minute % 2 === 1) stream.assistant(assistantFrame);
    }
    await stream.writable();
    if (minute >= 15 && minute < 25) earlyReadings.push(memory());
    if (minute >= 50) lateReadings.push(memory());
  }
  now = 3600_000;
  const done = await stream.finish();
  t.equal(stream.state, 'finished', String(stream.failure ?? ''));
  const dataBytes = 8000 * 3600 * 2;
  t.equal(done?.bytes, 58 + dataBytes, 'header and 60 minutes of two channels');
  const early = median(earlyReadings);
  const late = median(lateReadings);
  const growth = late - early;
  t.comment(
    `heap + buffers: median in minutes 15-25 ${(early / 2 ** 20).toFixed(1)} MiB, in minutes 50-60 ${(late / 2 ** 20).toFixed(1)} MiB`,
  );
  t.ok(growth < 8 * 2 ** 20, 'memory stays flat: under 8 MiB more at the end than early on (the recording is 57 MB)');
  t.equal(stream.partsUploaded, Math.ceil((58 + dataBytes) / (5 * 2 ** 20)), 'parts of 5 MiB');

  const head = await admin.send(new HeadObjectCommand({ Bucket: server.bucket, Key: 'calls/vs_longcall.wav' }));
  t.equal(head.ContentLength, 58 + dataBytes, 'one object, the whole call');
  const header = readWavHeader(await objectBytes(admin, server.bucket, 'calls/vs_longcall.wav', 0, 57))!;
  t.match(header, { formatTag: 7, channels: 2, sampleRateHz: 8000, bitsPerSample: 8, dataBytes, dataOffset: 58 });
  const at = (ms: number) => 58 + (ms / 1000) * 8000 * 2;
  const even = await objectBytes(
    admin,
    server.bucket,
    'calls/vs_longcall.wav',
    at(30 * 60_000 + 500),
    at(30 * 60_000 + 500) + 3,
  );
  t.same([...even], [0x11, 0xff, 0x11, 0xff], 'minute 30: the caller left, μ-law silence right');
  const odd = await objectBytes(
    admin,
    server.bucket,
    'calls/vs_longcall.wav',
    at(31 * 60_000 + 500),
    at(31 * 60_000 + 500) + 3,
  );
  t.same([...odd], [0x11, 0x22, 0x11, 0x22], 'minute 31: both, at the same time');
});

t.test('PCM16: the channels line up on the call clock, across part boundaries', async (t) => {
  const server = await startS3rver(t);
  const store = new S3RecordingStore(s3Options(server));
  const admin = new S3Client(s3Options(server));
  t.teardown(() => (store.close(), admin.destroy()));
  let now = 0;
  const audio = { format: 'pcm16', sampleRateHz: 24000 } as const;
  const stream = new StereoStream(
    () => store.beginMultipart('vs_pcmcall'),
    audio,
    0,
    () => now,
  );
  const frame = (v: number) => {
    const b = Buffer.alloc(960);
    for (let i = 0; i < 960; i += 2) b.writeInt16LE(v, i);
    return b;
  };
  // 120 s: the caller every 20 ms with its second as the value; the assistant answers at 50 s and 100 s, 10 s each,
  // its audio arriving in a burst faster than real time (as providers send it).
  for (let i = 0; i < 6000; i++) {
    now = i * 20;
    stream.caller(frame(Math.floor(now / 1000)));
    if (now === 50_000 || now === 100_000) for (let k = 0; k < 500; k++) stream.assistant(frame(-7));
    if (i % 500 === 0) await stream.writable();
  }
  now = 120_000;
  const done = await stream.finish();
  t.equal(done?.bytes, 44 + 120 * 24000 * 4, 'two minutes, two channels');
  const key = 'calls/vs_pcmcall.wav';
  const sampleAt = async (ms: number) => {
    const b = await objectBytes(admin, server.bucket, key, 44 + ms * 24 * 4, 44 + ms * 24 * 4 + 3);
    return [b.readInt16LE(0), b.readInt16LE(2)];
  };
  t.same(await sampleAt(10_500), [10, 0], '10.5 s: the caller, silence right');
  t.same(await sampleAt(54_500), [54, -7], '54.5 s (in part 2): the caller and the assistant together');
  t.same(await sampleAt(61_000), [61, 0], '61 s: the assistant done');
  t.same(await sampleAt(105_000), [105, -7], '105 s (in part 3): together again');
  t.same(await sampleAt(119_900), [119, 0], 'the end');
});

t.test('ten minutes without a frame in either direction become silence, on the clock', async (t) => {
  const server = await startS3rver(t);
  const store = new S3RecordingStore(s3Options(server));
  const admin = new S3Client(s3Options(server));
  t.teardown(() => (store.close(), admin.destroy()));
  let now = 0;
  const stream = new StereoStream(
    () => store.beginMultipart('vs_quietcall'),
    { format: 'pcmu', sampleRateHz: 8000 },
    0,
    () => now,
  );
  for (; now < 1000; now += 20) stream.caller(Buffer.alloc(160, 0x33));
  now = 600_000; // nothing at all for ten minutes (a muted caller, a silent assistant)
  stream.assistant(Buffer.alloc(160, 0x44));
  now = 601_000;
  const done = await stream.finish();
  t.equal(done?.bytes, 58 + 600_020 * 16, 'up to the last audio heard, silence included');
  const at = (ms: number) => 58 + (ms / 1000) * 8000 * 2;
  const key = 'calls/vs_quietcall.wav';
  t.same(
    [...(await objectBytes(admin, server.bucket, key, at(500), at(500) + 1))],
    [0x33, 0xff],
    'the caller at 0.5 s',
  );
  t.same(
    [...(await objectBytes(admin, server.bucket, key, at(300_000), at(300_000) + 1))],
    [0xff, 0xff],
    'silence at 5 minutes',
  );
  t.same(
    [...(await objectBytes(admin, server.bucket, key, at(600_000), at(600_000) + 1))],
    [0xff, 0x44],
    'the assistant at 10 minutes',
  );
});

t.test('a bucket that is down: the stream gives up and says so', async (t) => {
  const store = new S3RecordingStore(s3Options({ endpoint: await deadEndpoint(), bucket: 'recordings' }));
  t.teardown(() => store.close());
  let now = 0;
  const stream = new StereoStream(
    () => store.beginMultipart('vs_downcall'),
    { format: 'pcm16', sampleRateHz: 24000 },
    0,
    () => now,
    { retryMs: [10] },
  );
  for (let i = 0; i < 100; i++) {
    now = i * 20;
    stream.caller(Buffer.alloc(960, 1));
  }
  t.equal(await stream.finish(), null, 'nothing stored');
  t.equal(stream.state, 'failed');
});

t.test('the bucket stops answering mid-call: the stream gives up and stores nothing', async (t) => {
  const server = await startS3rver(t);
  const store = new S3RecordingStore(s3Options(server));
  t.teardown(() => store.close());
  let now = 0;
  const stream = new StereoStream(
    () => store.beginMultipart('vs_midcall'),
    { format: 'pcm16', sampleRateHz: 24000 },
    0,
    () => now,
    { retryMs: [10, 10], firstPartPath: join(scratchDir('parley-stream-'), 'vs_midcall.first.part') },
  );
  const frame = Buffer.alloc(960, 3);
  const feed = async (fromMs: number, toMs: number) => {
    for (let ms = fromMs; ms < toMs; ms += 20) {
      now = ms;
      stream.caller(frame);
      stream.assistant(frame);
      if (ms % 10_000 === 0) await stream.writable();
    }
  };
  await feed(0, 120_000); // past two parts: the upload has begun, part 2 sent
  await waitFor(() => (stream.partsUploaded >= 1 ? true : undefined), 'part 2 in the bucket');
  t.equal(stream.state, 'streaming', 'parts went up while the bucket answered');
  await server.close!();
  await feed(120_000, 240_000);
  await waitFor(() => (stream.state !== 'streaming' ? true : undefined), 'the stream to give up');
  t.equal(stream.state, 'failed', 'refused parts past their retries: the stream gives up');
  t.equal(await stream.finish(), null, 'nothing half-stored: the caller builds the WAV from its tracks instead');
});
