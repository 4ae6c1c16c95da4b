import type { ChatProvider } from '../providers/chat/index.js';

/**
 * The LLM judge of an eval answer: when the assistant answers through a hosted model (not the local engine), the
 * same provider is asked whether the answer states the expected facts, and its grade (0..1) is the case's score.
 * A grade it does not give (a failure, or a reply without a number from 0 to 1) leaves the facts-based score
 * (facts.ts). Its tokens are counted with the case's own (one usage event per case).
 */
export const JUDGE_MARKER = 'You grade answers against an expected answer.';

const JUDGE_INSTRUCTIONS =
  `${JUDGE_MARKER} Reply with one number from 0 to 1 and nothing else: 1 when the answer states every fact of ` +
  'the expected answer (extra correct detail is fine), 0 when it misses them or contradicts them (another number, ' +
  'name or policy), a fraction for a partly right answer.';

export interface JudgeVerdict {
  /** The grade, or null when the judge gave none. */
  score: number | null;
  inputTokens: number;
  outputTokens: number;
}

/** The grade in a judge's reply: its first number, when it lies in 0..1. */
export function parseGrade(reply: string): number | null {
  const match = /(?:^|[^\d.])((?:0|1)(?:\.\d+)?|\.\d+)(?!\d|\.\d)/.exec(` ${reply.trim()}`);
  if (match === null) return null;
  const value = Number.parseFloat(match[1]!);
  return value >= 0 && value <= 1 ? Math.round(value * 10_000) / 10_000 : null;
}

export async function judgeAnswer(
  provider: ChatProvider,
  c: { question: string; expected: string; answer: string },
  signal: AbortSignal,
): Promise<JudgeVerdict> {
  const prompt = `Question: ${c.question}\nExpected answer: ${c.expected}\nAnswer to grade: ${c.answer}\nGrade:`;
  const messages = [
    { role: 'system' as const, content: JUDGE_INSTRUCTIONS },
    { role: 'user' as const, content: prompt },
  ];
  let reply = '';
  let usage: { inputTokens: number; outputTokens: number } | undefined;
  try {
    for await (const event of provider.stream(
      { messages, passages: [], question: prompt, voiceUnavailable: false, maxOutputTokens: 8 },
      signal,
    )) {
      if (event.type === 'text') reply += event.text;
      else usage = { inputTokens: event.inputTokens, outputTokens: event.outputTokens };
    }
  } catch {
    // A judge that could not answer costs what it said, if anything; the facts-based score stands.
    if (reply === '')
      return { score: null, inputTokens: usage?.inputTokens ?? 0, outputTokens: usage?.outputTokens ?? 0 };
    reply = '';
  }
  const inputTokens = usage?.inputTokens ?? Math.ceil((JUDGE_INSTRUCTIONS.length + prompt.length) / 4);
  return { score: parseGrade(reply), inputTokens, outputTokens: usage?.outputTokens ?? Math.ceil(reply.length / 4) };
}
