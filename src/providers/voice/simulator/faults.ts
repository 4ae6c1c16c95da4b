/**
 * Fault hooks, chosen per session. Sources, later ones overriding earlier ones:
 *   1. the simulator's `defaultFaults` option (or `--faults` on the command line),
 *   2. the upgrade request: header `x-simulator-faults` or query `sim_faults`,
 *   3. the session instructions: any `[sim:...]` tag, e.g. `Be brief. [sim:drop-after=300,refuse-reconnect]`.
 * Handshake-time faults (start-refused, lock-rejected, refuse-reconnect) act as HTTP answers when they come from
 * 1 or 2; from instructions they act as an `error` event followed by a close, which is how a provider refuses a
 * session.start it has already accepted the socket for.
 *
 * Spec: comma- or space-separated `name` or `name=value` items:
 *   lock-unconfirmed[=omit|all|list]  started echoes no `client` config (default), 'all', or a non-empty list
 *   lock-rejected                     refuse the start with a 400 that names the data channel
 *   start-refused[=status]            refuse the start (default 503)
 *   slow-start=ms                     delay session.started
 *   drop-after=ms                     cut the socket (no close frame, client sees 1006) once, ms after start
 *   refuse-reconnect[=status]         answer resume attempts with this status (default 410)
 *   withhold-closed                   never send session.closed after session.close
 *   usage-jump=seconds                add this many seconds to usage at the second usage tick
 *   stall-reads=ms                    stop reading the client's frames for ms after start (fills its send path)
 *   garbage                           interleave unreadable frames (non-JSON, binary, typeless JSON)
 *   echo[=silent]                     echo mode: output audio = the input audio just received, frame for frame;
 *                                     announced by one output transcript ('silent': none, so a gate never opens)
 *   echo=paced[:ms]                   paced echo ("speaks like a provider"): the input audio comes back as one
 *                                     output delta every `ms` (default 100) at real-time pace, cut independently of
 *                                     the input framing, with an output transcript every 300 ms of speech
 *   delegate                          end of the first utterance creates a client delegation instead of a reply
 *   barge-in                          caller speech cuts the answer being spoken (what is left of it is never sent),
 *                                     as a provider's own voice activity detection interrupts its response
 *   webrtc-refused[=status]           refuse a WebRTC session create (default 503); WebSocket sessions still start
 *   webrtc-unreachable                answer the offer, but the peer never connects (ICE cannot succeed)
 *   tool=name{json args}              (instructions only; repeatable) the next reply is, once, a function call of
 *                                     the session's backend (Responses delegation with a tool of that name): one
 *                                     `response.event` stream with every tagged call (parallel calls), answered by
 *                                     `response.item.create` + `response.create`, after which it speaks the outputs
 *                                     in words (JSON punctuation dropped). Args: a JSON object without `]`.
 * On a WebRTC session, drop-after cuts the sideband, refuse-reconnect refuses sideband re-attaches, and a re-attach
 * replays the recent events (so the client must dedupe).
 */
export interface SimulatorFaults {
  lock?: 'omit' | 'all' | 'list' | 'rejected';
  startRefused?: number;
  slowStartMs?: number;
  dropAfterMs?: number;
  refuseReconnect?: number;
  withholdClosed?: boolean;
  usageJumpSeconds?: number;
  stallReadsMs?: number;
  garbage?: boolean;
  echo?: boolean;
  /** Echo without the announcing output transcript. */
  echoSilent?: boolean;
  /** Paced echo: the echoed audio leaves in deltas of this many ms, one per that many ms of wall time. */
  echoPacedMs?: number;
  delegate?: boolean;
  bargeIn?: boolean;
  webrtcRefused?: number;
  webrtcUnreachable?: boolean;
  /** Function calls the next reply makes (from `tool=` tags), in order. */
  tools?: Array<{ name: string; arguments: string }>;
}

function numberOr(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

/** Parse a fault spec; unknown items are ignored so a typo cannot crash a standalone simulator. */
export function parseFaults(spec: string | undefined | null): SimulatorFaults {
  const faults: SimulatorFaults = {};
  if (!spec) return faults;
  for (const item of spec.split(/[\s,]+/)) {
    if (item === '') continue;
    const eq = item.indexOf('=');
    const name = (eq === -1 ? item : item.slice(0, eq)).toLowerCase();
    const value = eq === -1 ? undefined : item.slice(eq + 1);
    switch (name) {
      case 'lock-unconfirmed':
        faults.lock = value === 'all' || value === 'list' ? value : 'omit';
        break;
      case 'lock-rejected':
        faults.lock = 'rejected';
        break;
      case 'start-refused':
        faults.startRefused = numberOr(value, 503);
        break;
      case 'slow-start':
        faults.slowStartMs = numberOr(value, 5000);
        break;
      case 'drop-after':
      case 'drop-mid-call':
        faults.dropAfterMs = numberOr(value, 1000);
        break;
      case 'refuse-reconnect':
        faults.refuseReconnect = numberOr(value, 410);
        break;
      case 'withhold-closed':
        faults.withholdClosed = true;
        break;
      case 'usage-jump':
        faults.usageJumpSeconds = numberOr(value, 600);
        break;
      case 'stall-reads':
        faults.stallReadsMs = numberOr(value, 1000);
        break;
      case 'garbage':
        faults.garbage = true;
        break;
      case 'echo':
        faults.echo = true;
        if (value === 'silent') faults.echoSilent = true;
        else if (value !== undefined && /^paced(:\d+)?$/.test(value))
          faults.echoPacedMs = Math.max(10, numberOr(value.slice(6), 100));
        break;
      case 'delegate':
        faults.delegate = true;
        break;
      case 'barge-in':
        faults.bargeIn = true;
        break;
      case 'webrtc-refused':
        faults.webrtcRefused = numberOr(value, 503);
        break;
      case 'webrtc-unreachable':
        faults.webrtcUnreachable = true;
        break;
      default:
        break;
    }
  }
  return faults;
}

const TAG = /\[sim:([^\]]*)\]/g;
const TOOL_ITEM = /tool=([a-z][a-z0-9_]*)(\{[^\]]*?\}(?=$|[\s,]))?/g;

/** Faults named in instructions via `[sim:...]` tags (all tags merged). */
export function faultsFromInstructions(instructions: string | null | undefined): SimulatorFaults {
  if (!instructions) return {};
  let merged: SimulatorFaults = {};
  const tools: NonNullable<SimulatorFaults['tools']> = [];
  for (const match of instructions.matchAll(TAG)) {
    // tool=name{json}: the JSON may hold commas and spaces, so it is taken out before the spec is split.
    const rest = (match[1] ?? '').replace(TOOL_ITEM, (_all, name: string, args: string | undefined) => {
      tools.push({ name, arguments: args ?? '{}' });
      return ' ';
    });
    merged = { ...merged, ...parseFaults(rest) };
  }
  return tools.length > 0 ? { ...merged, tools } : merged;
}

/** The turn-taking line Parley's adapter adds to the instructions (protocol.ts turnTakingInstructions), read back. */
const SILENCE = /the caller's turn ends after (\d{1,5}) ms of silence/;
const INTERRUPT = /talked over you for (\d{1,5}) ms/;

/**
 * What the session's instructions ask of its turn taking, as a model would follow them: the simulator ends the
 * caller's utterance only after `endOfSpeechSilenceMs` of silence (default: its first silent chunk).
 */
export function turnTakingFromInstructions(instructions: string | null | undefined): SimulatedTurnTaking {
  const silence = SILENCE.exec(instructions ?? '')?.[1];
  const interrupt = INTERRUPT.exec(instructions ?? '')?.[1];
  return {
    ...(silence !== undefined ? { endOfSpeechSilenceMs: Number(silence) } : {}),
    ...(interrupt !== undefined ? { interruptAfterMs: Number(interrupt) } : {}),
  };
}

export interface SimulatedTurnTaking {
  endOfSpeechSilenceMs?: number;
  interruptAfterMs?: number;
}
