import type { Passage } from '../retrieval/index.js';
import type { ChatTurn } from '../providers/chat/index.js';

const BASE = [
  'You are a helpful assistant on a website. Answer from the knowledge passages below.',
  'If they do not contain the answer, say you do not know; do not invent facts.',
  'Be concise.',
].join(' ');

const VOICE_NOTE =
  "The visitor's voice call has just ended. If it comes up, say neutrally that voice is not available right now and " +
  'offer to continue in text. Do not give or guess a reason.';

/** The prompt for model providers: instructions, passages (numbered, with their document and heading), history, question. */
export function buildMessages(input: {
  instructions: string | null;
  passages: Passage[];
  history: Array<{ role: 'user' | 'assistant'; content: string }>;
  question: string;
  voiceUnavailable: boolean;
}): ChatTurn[] {
  const knowledge = input.passages.length
    ? input.passages
        .map((p, i) => `[${i + 1}] ${p.documentName}${p.heading ? ` — ${p.heading}` : ''}\n${p.content}`)
        .join('\n\n')
    : '(no passage matched this question)';
  const system = [
    BASE,
    input.instructions ? `Owner instructions:\n${input.instructions}` : '',
    input.voiceUnavailable ? VOICE_NOTE : '',
    `Knowledge passages:\n${knowledge}`,
  ]
    .filter((s) => s.length > 0)
    .join('\n\n');
  return [
    { role: 'system', content: system },
    ...input.history.map((h) => ({ role: h.role, content: h.content })),
    { role: 'user', content: input.question },
  ];
}
