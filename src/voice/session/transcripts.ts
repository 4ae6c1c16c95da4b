/**
 * Turns transcript fragments into conversation messages. Fragments of one speaker are joined until the other
 * speaker starts (or the session ends); then the turn is handed to `write`, off the provider's hot path.
 * Transcripts are content: never logged.
 */
export interface TranscriptTurn {
  role: 'user' | 'assistant';
  text: string;
  /** For grounded assistant turns: the passages the answer came from. */
  sources: TurnSource[];
  /** Grounded turns: whether the documents had an answer. Null for small talk. */
  outcome: 'answered' | 'no_answer' | null;
}

export interface TurnSource {
  documentId: string;
  name: string;
  snippet: string;
  score: number;
}

export class TranscriptAssembler {
  private role: 'user' | 'assistant' | undefined;
  private parts: string[] = [];
  private sources: TurnSource[] = [];
  private outcome: TranscriptTurn['outcome'] = null;
  /** The visitor's words since the assistant last spoke: what a delegated turn asks about. */
  private question: string[] = [];
  /** Where the question of the latest delegation ended (ms on the session's timeline), while the caller's turn lasts. */
  private questionEndMs: number | undefined;

  constructor(private readonly write: (turn: TranscriptTurn) => void) {}

  /**
   * `startMs`: where a user fragment starts on the session's timeline. A fragment that starts at or after the end of
   * a question already handed over is the caller's next turn, even when the answer to the first has not been spoken
   * yet (a busy recognizer can deliver two utterances before the first answer plays): it is stored, and grounded, as a
   * question of its own. Fragments of the same utterance that arrive after its delegation start before that end.
   */
  add(role: 'user' | 'assistant', text: string, startMs?: number): void {
    if (text.trim() === '') return;
    if (
      role === 'user' &&
      this.role === 'user' &&
      startMs !== undefined &&
      startMs >= (this.questionEndMs ?? Infinity)
    ) {
      this.flush();
      this.question = [];
    }
    if (this.role !== role) this.flush();
    this.role = role;
    this.parts.push(text.trim());
    if (role === 'user') this.question.push(text.trim());
  }

  /** The model handed the caller's question over; it ended at `endMs` on the session's timeline. */
  questionAsked(endMs: number): void {
    if (this.role === 'user') this.questionEndMs = endMs;
  }

  /** The visitor's latest question (their words since the assistant last spoke). */
  pendingQuestion(): string {
    return this.question.join(' ');
  }

  /** Sources of a grounded answer: stored with the assistant turn that speaks it. */
  attachGrounding(sources: TurnSource[], outcome: 'answered' | 'no_answer'): void {
    if (this.role === 'assistant') this.flush();
    this.sources = sources;
    this.outcome = outcome;
  }

  /** End of the current turn (speaker change or end of call). */
  flush(): void {
    if (this.role !== undefined && this.parts.length > 0) {
      const turn: TranscriptTurn = { role: this.role, text: this.parts.join(' '), sources: [], outcome: null };
      if (this.role === 'assistant') {
        turn.sources = this.sources;
        turn.outcome = this.outcome;
        this.sources = [];
        this.outcome = null;
        this.question = [];
      }
      this.write(turn);
    }
    this.role = undefined;
    this.parts = [];
    this.questionEndMs = undefined;
  }
}
