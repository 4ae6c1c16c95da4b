import { randomInt } from 'node:crypto';
import { MULAW_TO_LINEAR, linearToMulaw } from '../g711.js';

/**
 * The simulator's WebRTC audio: G.711 μ-law (PCMU, RTP payload type 0, 8 kHz), which every browser offers. Its
 * answer keeps only PCMU, so nothing here decodes or encodes Opus: the caller's packets are μ-law, turned into the
 * PCM16 24 kHz the simulated session hears (and the sideband reflects), and its speech goes back as μ-law packets.
 */

export const PCMU_PAYLOAD_TYPE = 0;
/** 20 ms of PCMU at 8 kHz. */
const SAMPLES_PER_PACKET = 160;

/** The payload of an RTP packet carrying PCMU; undefined for RTCP, other payload types and malformed packets. */
export function pcmuPayloadOf(packet: Buffer): Buffer | undefined {
  if (packet.length < 12 || packet[0]! >> 6 !== 2) return undefined;
  if ((packet[1]! & 0x7f) !== PCMU_PAYLOAD_TYPE) return undefined;
  let offset = 12 + 4 * (packet[0]! & 0x0f);
  if (packet[0]! & 0x10) {
    if (packet.length < offset + 4) return undefined;
    offset += 4 + 4 * packet.readUInt16BE(offset + 2);
  }
  let end = packet.length;
  if (packet[0]! & 0x20) end -= packet[end - 1]!;
  return offset < end ? packet.subarray(offset, end) : undefined;
}

/** μ-law 8 kHz -> PCM16LE 24 kHz (linear interpolation between samples). */
export function pcmuToPcm24k(mulaw: Buffer): Buffer {
  const out = Buffer.alloc(mulaw.length * 6);
  for (let i = 0; i < mulaw.length; i++) {
    const a = MULAW_TO_LINEAR[mulaw[i]!]!;
    const b = MULAW_TO_LINEAR[mulaw[Math.min(i + 1, mulaw.length - 1)]!]!;
    for (let k = 0; k < 3; k++) out.writeInt16LE(Math.round(a + ((b - a) * k) / 3), (i * 3 + k) * 2);
  }
  return out;
}

/** PCM16LE 24 kHz -> μ-law 8 kHz (each output sample the mean of three: a crude low-pass before decimating). */
export function pcm24kToPcmu(pcm: Buffer): Buffer {
  const n = Math.floor(pcm.length / 6);
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) {
    const s = pcm.readInt16LE(i * 6) + pcm.readInt16LE(i * 6 + 2) + pcm.readInt16LE(i * 6 + 4);
    out[i] = linearToMulaw(Math.round(s / 3));
  }
  return out;
}

/** Packetizes μ-law audio as RTP (one packet per 20 ms; a random SSRC, sequence and timestamp start, RFC 3550). */
export class PcmuPacketizer {
  readonly ssrc = randomInt(1, 0xffffffff);
  private seq = randomInt(0, 0xffff);
  private timestamp = randomInt(0, 0xffffffff);
  private pending: Buffer = Buffer.alloc(0);

  /** Whole packets for the audio so far (a remainder waits for the next call). */
  packets(mulaw: Buffer): Buffer[] {
    this.pending = this.pending.length === 0 ? mulaw : Buffer.concat([this.pending, mulaw]);
    const out: Buffer[] = [];
    while (this.pending.length >= SAMPLES_PER_PACKET) {
      const packet = Buffer.alloc(12 + SAMPLES_PER_PACKET);
      packet[0] = 0x80;
      packet[1] = PCMU_PAYLOAD_TYPE;
      packet.writeUInt16BE(this.seq, 2);
      packet.writeUInt32BE(this.timestamp >>> 0, 4);
      packet.writeUInt32BE(this.ssrc >>> 0, 8);
      this.pending.copy(packet, 12, 0, SAMPLES_PER_PACKET);
      this.pending = this.pending.subarray(SAMPLES_PER_PACKET);
      this.seq = (this.seq + 1) & 0xffff;
      this.timestamp = (this.timestamp + SAMPLES_PER_PACKET) >>> 0;
      out.push(packet);
    }
    return out;
  }
}

/**
 * The answer as the simulator gives it: its audio section offers PCMU only (the browser then sends μ-law) and names
 * the simulator's sending SSRC (so the browser's receiver knows the stream). Other sections pass unchanged.
 */
export function pcmuOnlyAnswer(sdp: string, ssrc: number): string {
  const eol = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/);
  const out: string[] = [];
  let inAudio = false;
  for (const line of lines) {
    if (line.startsWith('m=')) {
      inAudio = line.startsWith('m=audio ');
      if (inAudio) {
        const parts = line.split(' ');
        out.push([...parts.slice(0, 3), String(PCMU_PAYLOAD_TYPE)].join(' '));
        continue;
      }
    }
    if (inAudio && /^a=(rtpmap|fmtp|rtcp-fb):/.test(line) && !line.startsWith(`a=rtpmap:${PCMU_PAYLOAD_TYPE} `))
      continue;
    if (inAudio && (line.startsWith('a=ssrc:') || line.startsWith('a=msid:'))) continue;
    out.push(line);
    if (inAudio && line === 'a=rtcp-mux') {
      out.push(
        'a=msid:simulator assistant',
        `a=ssrc:${ssrc} cname:parley-simulator`,
        `a=ssrc:${ssrc} msid:simulator assistant`,
      );
    }
  }
  return out.join(eol);
}

/** Whether an offer can carry PCMU audio (the simulator's one codec). */
export function offersPcmu(sdp: string): boolean {
  return /^m=audio [^\r\n]*/m.test(sdp) && /^a=rtpmap:0 PCMU\/8000/im.test(sdp);
}
