/** Where a call Parley placed stands; the last five are final. */
export const CALL_STATUSES = [
  'queued',
  'ringing',
  'in_progress',
  'completed',
  'busy',
  'no_answer',
  'failed',
  'canceled',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

/** How a call ended, for the owner: who or what answered, or why nobody did. */
export const CALL_OUTCOMES = ['answered', 'voicemail', 'busy', 'no_answer', 'failed', 'canceled'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

export const ANSWERED_BY = ['human', 'machine', 'fax', 'unknown'] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

const RANK: Record<CallStatus, number> = {
  queued: 0,
  ringing: 1,
  in_progress: 2,
  completed: 3,
  busy: 3,
  no_answer: 3,
  failed: 3,
  canceled: 3,
};

export const isFinal = (status: CallStatus): boolean => RANK[status] === 3;

/**
 * Whether a status the carrier reports moves the call forward. Callbacks may arrive out of order or twice; a call
 * never goes back (ringing after in_progress) and a final status is never replaced.
 */
export const movesForward = (from: CallStatus, to: CallStatus): boolean => !isFinal(from) && RANK[to] > RANK[from];

/** The carrier's CallStatus (Twilio's words) as a call status; undefined for a word it does not use. */
export function statusOfCarrier(word: string | undefined): CallStatus | undefined {
  switch (word) {
    case 'queued':
    case 'initiated':
      return 'queued';
    case 'ringing':
      return 'ringing';
    case 'in-progress':
    case 'answered':
      return 'in_progress';
    case 'completed':
      return 'completed';
    case 'busy':
      return 'busy';
    case 'no-answer':
      return 'no_answer';
    case 'failed':
      return 'failed';
    case 'canceled':
      return 'canceled';
    default:
      return undefined;
  }
}

/** The carrier's AnsweredBy (human, machine_start, machine_end_beep, machine_end_silence, machine_end_other, fax). */
export function answeredByOfCarrier(word: string | undefined): AnsweredBy | undefined {
  if (word === undefined || word === '') return undefined;
  if (word === 'human') return 'human';
  if (word.startsWith('machine')) return 'machine';
  if (word === 'fax') return 'fax';
  return 'unknown';
}

/** The outcome of a call that reached a final status. */
export function outcomeOf(status: CallStatus, answeredBy: string | null, wasAnswered: boolean): CallOutcome | null {
  switch (status) {
    case 'completed':
      if (answeredBy === 'machine' || answeredBy === 'fax') return 'voicemail';
      return wasAnswered ? 'answered' : 'no_answer';
    case 'busy':
    case 'no_answer':
    case 'failed':
    case 'canceled':
      return status;
    default:
      return null;
  }
}
