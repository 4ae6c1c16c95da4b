import type { Sql } from '../../db/index.js';
import { retrievePassages, snippetOf } from '../../retrieval/index.js';
import type { TurnSource } from './transcripts.js';

/**
 * Grounding for a delegated voice turn (docs/voice-protocol.md): the model hands the turn to Parley, Parley searches the
 * assistant's documents for the visitor's question and gives the passages back to the model as commentary (what it
 * may say) with an instruction to answer only from them. The sources are stored with the assistant's turn.
 */
export interface GroundedAnswer {
  /** Speakable text handed to the model as commentary. */
  commentary: string;
  /** Developer instruction that goes with it. */
  instruction: string;
  sources: TurnSource[];
  outcome: 'answered' | 'no_answer';
}

const PASSAGES = 3;
const SNIPPET_CHARS = 320;

export async function groundQuestion(
  sql: Sql,
  assistant: { id: string; language: string },
  question: string,
): Promise<GroundedAnswer> {
  const passages = question.trim() === '' ? [] : await retrievePassages(sql, assistant, question, PASSAGES);
  if (passages.length === 0) {
    return {
      commentary: 'I could not find that in the documents I have.',
      instruction: 'The documents do not answer this question. Say so briefly; do not guess.',
      sources: [],
      outcome: 'no_answer',
    };
  }
  const sources = passages.map((p) => ({
    documentId: p.documentId,
    name: p.documentName,
    snippet: snippetOf(p.content, question, SNIPPET_CHARS),
    score: p.score,
  }));
  return {
    commentary: sources.map((s) => s.snippet).join(' '),
    instruction:
      "Answer the caller only from the commentary just given (the owner's documents), briefly and in spoken style.",
    sources,
    outcome: 'answered',
  };
}
