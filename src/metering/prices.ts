/**
 * The price catalog: what each provider call costs Parley, in integer micros (1,000,000 = $1). The one place
 * prices live; chat, ingestion, evals and voice all price through here.
 *
 * Token prices are per million tokens so they stay integers (gpt-4o-mini input is $0.15 / 1M = 150,000 micros
 * per 1M tokens). A model missing from the catalog is priced as FALLBACK_MODEL_PRICE: an unknown model is never
 * free. What runs on this machine costs nothing and is priced 0 where it is settled: local answers (src/chat/meter.ts),
 * the local voice (the Meter's voiceSecondMicros) and ingestion (the Meter's ingestionChunkMicros). The `local` row below only sizes estimates of a model name.
 */
export interface ModelPrice {
  inputMicrosPerMillionTokens: number;
  outputMicrosPerMillionTokens: number;
}

export const MODEL_PRICES: Readonly<Record<string, ModelPrice>> = Object.freeze({
  'gpt-4o-mini': { inputMicrosPerMillionTokens: 150_000, outputMicrosPerMillionTokens: 600_000 },
  'gpt-4o': { inputMicrosPerMillionTokens: 2_500_000, outputMicrosPerMillionTokens: 10_000_000 },
  'gpt-4.1': { inputMicrosPerMillionTokens: 2_000_000, outputMicrosPerMillionTokens: 8_000_000 },
  'gpt-4.1-mini': { inputMicrosPerMillionTokens: 400_000, outputMicrosPerMillionTokens: 1_600_000 },
  'gpt-4.1-nano': { inputMicrosPerMillionTokens: 100_000, outputMicrosPerMillionTokens: 400_000 },
  local: { inputMicrosPerMillionTokens: 150_000, outputMicrosPerMillionTokens: 600_000 },
});

/** Unknown models: priced like a large model, so a misconfiguration overestimates rather than gives away. */
export const FALLBACK_MODEL_PRICE: ModelPrice = Object.freeze({
  inputMicrosPerMillionTokens: 2_500_000,
  outputMicrosPerMillionTokens: 10_000_000,
});

/**
 * Ingestion: one stored chunk. Parsing, chunking and indexing run on this machine (PostgreSQL full-text search, no
 * hosted embeddings), so a chunk costs nothing. A hosted ingestion step would pass its own price to the Meter
 * (`ingestionChunkMicros`); the chunks are still counted (units) either way.
 */
export const INGESTION_CHUNK_MICROS = 0;
/** Realtime voice: one second of a call (audio in and out), about $0.06 a minute. */
export const VOICE_SECOND_MICROS = 1_000;

export function modelPrice(model: string): ModelPrice {
  return MODEL_PRICES[model] ?? FALLBACK_MODEL_PRICE;
}

/** Cost of one chat completion, rounded up to a whole micro (a request is never free by rounding). */
export function priceChat(model: string, inputTokens: number, outputTokens: number): number {
  const price = modelPrice(model);
  const scaled =
    Math.max(0, inputTokens) * price.inputMicrosPerMillionTokens +
    Math.max(0, outputTokens) * price.outputMicrosPerMillionTokens;
  return Math.ceil(scaled / 1_000_000);
}

/** The reservation for a chat call: its input priced exactly, its output at the ceiling (HOSTED_USAGE_MAX_OUTPUT_TOKENS). */
export function estimateChat(model: string, inputTokens: number, maxOutputTokens: number): number {
  return priceChat(model, inputTokens, maxOutputTokens);
}

/** Cost of `chunks` stored chunks at `microsPerChunk` (0 on this machine: see INGESTION_CHUNK_MICROS). */
export function priceIngestion(chunks: number, microsPerChunk = INGESTION_CHUNK_MICROS): number {
  return Math.max(0, Math.ceil(chunks)) * microsPerChunk;
}

/** Cost of `seconds` of a call at `microsPerSecond` (the installation's voice provider: 0 for the local voice). */
export function priceVoiceSeconds(seconds: number, microsPerSecond = VOICE_SECOND_MICROS): number {
  return Math.max(0, Math.ceil(seconds)) * microsPerSecond;
}

/**
 * A deliberately generous token estimate for text not yet tokenised: about 3 characters per token (English
 * averages ~4), plus a per-message overhead. Used to size reservations, never to bill.
 */
export function estimateTokens(text: string, messages = 1): number {
  return Math.ceil(text.length / 3) + 8 * Math.max(1, messages);
}
