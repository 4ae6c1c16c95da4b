import { LOCAL_NO_ANSWER } from '../providers/chat/index.js';
import { extractFields } from './local-fields.js';
import type { AnalysisEngine, SentimentResult, SuccessVerdict, TranscriptMessage } from './types.js';

/**
 * The offline engine: no language model, and it says so (`engine: 'local'`). A summary quoted from the
 * conversation, fields found by pattern, success from whether the questions were answered or refused, sentiment
 * from a word list. Everything it reports can be found, word for word, in the transcript.
 */

const QUOTE_MAX = 240;
const QUESTION = /\?|^\s*(who|what|when|where|why|how|which|can|could|do|does|is|are|will|would|should)\b/i;
/** Answers that decline: the local provider's own, and the usual ways a model says it does not know. */
const REFUSAL =
  /\b(i (do not|don't) know|i('m| am) not sure|(could not|couldn't|can't|cannot) (find|help|answer)|no information|(not able|unable) to (help|answer|find)|(do not|don't) have (that|any|this) information)\b/i;

const POSITIVE = new Set(
  'thanks thank great good perfect excellent helpful awesome love lovely wonderful happy glad appreciate brilliant fantastic nice amazing pleased solved works'.split(
    ' ',
  ),
);
const NEGATIVE = new Set(
  'bad terrible awful useless angry annoyed frustrated frustrating disappointed disappointing hate horrible worst wrong broken problem unhappy upset ridiculous complaint refund cancel poor slow'.split(
    ' ',
  ),
);

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return `"${flat.length > QUOTE_MAX ? `${flat.slice(0, QUOTE_MAX - 3)}...` : flat}"`;
}

/** Whether an answer declined (an outcome the chat recorded, or the words of a refusal). */
export function isRefusal(answer: TranscriptMessage): boolean {
  if (answer.outcome === 'no_answer' || answer.outcome === 'model_failure') return true;
  if (answer.outcome === 'answered') return false;
  return answer.content.startsWith(LOCAL_NO_ANSWER) || REFUSAL.test(answer.content);
}

/** Each caller message with the answer that followed it (null when none did). */
function exchanges(
  transcript: TranscriptMessage[],
): Array<{ asked: TranscriptMessage; answer: TranscriptMessage | null }> {
  const out: Array<{ asked: TranscriptMessage; answer: TranscriptMessage | null }> = [];
  transcript.forEach((m, i) => {
    if (m.role !== 'user') return;
    const next = transcript[i + 1];
    out.push({ asked: m, answer: next?.role === 'assistant' ? next : null });
  });
  return out;
}

export function localSummary(transcript: TranscriptMessage[]): { value: string | null; reason?: string } {
  const all = exchanges(transcript).filter((e) => e.asked.content.trim() !== '');
  if (all.length === 0) return { value: null, reason: 'the conversation has no message from the caller' };
  const first = all.find((e) => QUESTION.test(e.asked.content)) ?? all[0]!;
  let text = `The caller asked: ${quote(first.asked.content)}`;
  text += first.answer ? ` The assistant answered: ${quote(first.answer.content)}` : ' It was not answered.';
  const more = all.length - 1;
  if (more > 0) text += ` (${more} more message${more === 1 ? '' : 's'} from the caller.)`;
  return { value: text };
}

export function localSuccess(transcript: TranscriptMessage[], rubric: SuccessVerdict['rubric']): SuccessVerdict | null {
  const asked = exchanges(transcript).filter((e) => e.asked.content.trim() !== '');
  if (asked.length === 0) return null;
  const refused = asked.filter((e) => e.answer === null || isRefusal(e.answer)).length;
  const answered = asked.length - refused;
  const rationale = `${answered} of ${asked.length} caller message${asked.length === 1 ? ' was' : 's were'} answered; ${refused} ${refused === 1 ? 'was' : 'were'} refused or left unanswered.`;
  if (rubric === 'pass_fail') return { rubric, verdict: answered > 0 && refused === 0, rationale };
  if (rubric === 'score_1_10') return { rubric, verdict: Math.round(1 + (9 * answered) / asked.length), rationale };
  return { rubric, verdict: rationale, rationale: 'Counted from the answers; no language model was used.' };
}

export function localSentiment(transcript: TranscriptMessage[]): SentimentResult {
  let positive = 0;
  let negative = 0;
  for (const m of transcript) {
    if (m.role !== 'user') continue;
    for (const word of m.content.toLowerCase().match(/[a-z']+/g) ?? []) {
      if (POSITIVE.has(word)) positive++;
      else if (NEGATIVE.has(word)) negative++;
    }
  }
  const total = positive + negative;
  const score = total === 0 ? 0 : Math.round(((positive - negative) / total) * 100) / 100;
  return { label: score > 0.2 ? 'positive' : score < -0.2 ? 'negative' : 'neutral', score };
}

/** The offline engine (see the top of this file). Its steps are quick and need no signal. */
export function createLocalEngine(): AnalysisEngine {
  return {
    name: 'local',
    costMicros: 0,
    model: 'local-extractive',
    summary: async (transcript) => localSummary(transcript),
    structuredData: async (transcript, config) => {
      const { value, notes } = extractFields(transcript, config.schema);
      return { value, notes };
    },
    successEvaluation: async (transcript, config) => {
      const verdict = localSuccess(transcript, config.rubric);
      return verdict ? { value: verdict } : { value: null, reason: 'the conversation has no message from the caller' };
    },
    sentiment: async (transcript) => ({ value: localSentiment(transcript) }),
  };
}
