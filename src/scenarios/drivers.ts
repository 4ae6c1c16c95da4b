import type { ToolMock, TranscriptEntry } from './schemas.js';

/**
 * What a scenario run drives, built by the app over the real services (src/scenarios/wiring.ts): chat turns through
 * the chat service, voice calls minted by the voice service and joined over the server's own media WebSocket.
 * Absent parts make scenarios of that transport end as errors that say what is missing.
 */
export interface ScenarioDrivers {
  chatTurn?(input: ChatTurnInput): Promise<ChatTurnOutput>;
  mintVoice?(input: MintInput): Promise<MintedCall>;
  /** The text as the call's audio in 20 ms frames (the local synthesizer); undefined when it is not installed. */
  speak?: ((text: string, audio: CallAudio) => Promise<Buffer[]>) | undefined;
  /** A phone call minted onto the carrier transport (source `test`), its stream expected with a signature. */
  mintPhone?(input: MintInput): Promise<MintedPhoneCall>;
  /** After a call: its stored messages in order and its end reason. */
  callFacts?(
    sessionId: string,
    conversationId: string,
  ): Promise<{ messages: Array<{ role: string; content: string }>; endReason: string | null }>;
  /**
   * The simulated caller's ears: each stretch of answer audio (the call's format) recognized with the local recognizer
   * and a model of the assistant's documents; undefined when the recognizer is not installed.
   */
  listen?:
    | ((assistantId: string, stretches: Buffer[], audio: CallAudio, signal: AbortSignal) => Promise<string[]>)
    | undefined;
  /** The conversation's post-call analysis once completed, or null (polled by `analysis` expectations). */
  analysisOf?(accountId: string, conversationId: string): Promise<Record<string, unknown> | null>;
  /**
   * Queues the conversation's analysis now (a chat scenario is over when its turns are: it need not go idle first);
   * false when the assistant has no analysis step on.
   */
  requestAnalysis?(accountId: string, conversationId: string): Promise<boolean>;
}

/** A call a voice scenario mints: its tool calls go through the scenario's mocks and are reported as they are made. */
export interface MintInput {
  accountId: string;
  assistantId: string;
  signal: AbortSignal;
  toolMocks: ToolMock[];
  onToolCall(call: ToolCallSeen): void;
}

export interface CallAudio {
  format: 'pcm16' | 'pcmu' | 'pcma';
  sampleRateHz: number;
}

export interface ChatTurnInput {
  accountId: string;
  assistantId: string;
  conversationId: string | undefined;
  message: string;
  toolMocks: ToolMock[];
  signal: AbortSignal;
  /** Called on the answer's first text. */
  onFirstText(): void;
}

export interface ToolCallSeen {
  name: string;
  arguments: unknown;
  result: unknown;
  mocked: boolean;
}

export interface ChatTurnOutput {
  conversationId: string;
  answer: string;
  toolCalls: ToolCallSeen[];
}

export interface MintedCall {
  sessionId: string;
  conversationId: string;
  /** The media WebSocket on this server (ws://host:port/...?token=...). */
  mediaUrl: string;
  audio: CallAudio;
  /** Ends the call as its caller (idempotent). */
  end(): Promise<void>;
}

export interface MintedPhoneCall {
  sessionId: string;
  conversationId: string;
  /** The phone-stream socket on this server. */
  mediaUrl: string;
  /** The carrier's signature of the stream, as the upgrade must carry it. */
  headers: Record<string, string>;
  /** Sent in the stream's `start` (never in the URL). */
  controlToken: string;
  end(): Promise<void>;
}

/** What a scenario's run observed, judged by judge.ts. */
export interface Observed {
  conversationId: string | null;
  transcript: TranscriptEntry[];
  toolCalls: ToolCallSeen[];
  turnLatenciesMs: number[];
  firstAudioMs: number | null;
  stopAfterInterruptMs: number[];
  endReason: string | null;
  /** The post-call analysis, fetched only when an expectation asks for it. */
  analysis?: Record<string, unknown> | null;
}
