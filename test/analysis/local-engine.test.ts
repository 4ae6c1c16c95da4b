import t from 'tap';
import { extractFields } from '../../src/analysis/local-fields.js';
import { localSentiment, localSuccess, localSummary } from '../../src/analysis/local-engine.js';
import { checkStructuredData } from '../../src/analysis/schema-check.js';
import type { AnalysisSchema, TranscriptMessage } from '../../src/analysis/types.js';

const at = new Date('2026-11-28T10:00:00Z');
const said = (role: 'user' | 'assistant', content: string, outcome: TranscriptMessage['outcome'] = null) => ({
  role,
  content,
  outcome,
  at,
});

t.test('fields by pattern: numbers, emails, dates, enum words, yes and no', async (t) => {
  const schema: AnalysisSchema = {
    type: 'object',
    properties: {
      orderNumber: { type: 'string' },
      quantity: { type: 'integer' },
      contactEmail: { type: 'string', format: 'email' },
      callbackTime: { type: 'string' },
      deliveryDate: { type: 'string', format: 'date' },
      callbackRequested: { type: 'boolean' },
      newsletter: { type: 'boolean' },
      size: { enum: ['small', 'medium', 'large'] },
      name: { type: 'string' },
    },
  };
  const transcript = [
    said('user', 'Hi, my name is Ada Lovelace. Order number A-7731 please, quantity 3, a large one.'),
    said('assistant', 'Noted. Anything else?'),
    said('user', 'Deliver on 2026-12-02, write to ada@example.com, call me back tomorrow at 3pm. No newsletter.'),
  ];
  const { value, notes } = extractFields(transcript, schema);
  t.same(value, {
    orderNumber: 'A-7731',
    quantity: 3,
    contactEmail: 'ada@example.com',
    callbackTime: 'tomorrow at 3pm',
    deliveryDate: '2026-12-02',
    callbackRequested: true,
    newsletter: false,
    size: 'large',
    name: 'Ada Lovelace',
  });
  t.same(notes, []);
  t.same(extractFields([said('user', 'Hello')], schema).value.quantity, null, 'nothing guessed');
});

t.test('summary quotes the first question and its answer; success and sentiment count', async (t) => {
  const transcript = [
    said('user', 'Hello there'),
    said('assistant', 'Hi!'),
    said('user', 'What time do you open?'),
    said('assistant', 'We open at nine.', 'answered'),
    said('user', 'Do you sell bikes? This is useless, terrible service.'),
    said('assistant', "I couldn't find anything about that in my knowledge base.", 'no_answer'),
  ];
  t.equal(
    localSummary(transcript).value,
    'The caller asked: "What time do you open?" The assistant answered: "We open at nine." (2 more messages from the caller.)',
  );
  t.match(localSuccess(transcript, 'pass_fail'), {
    verdict: false,
    rationale: '2 of 3 caller messages were answered; 1 was refused or left unanswered.',
  });
  t.match(localSuccess(transcript, 'score_1_10'), { verdict: 7 });
  t.same(localSentiment(transcript), { label: 'negative', score: -1 });
  t.same(localSummary([]), { value: null, reason: 'the conversation has no message from the caller' });
});

t.test('structured values are checked against the schema', async (t) => {
  const schema: AnalysisSchema = {
    type: 'object',
    properties: { n: { type: 'integer' }, ok: { type: 'boolean' }, when: { type: 'string', format: 'date' } },
    required: ['n'],
  };
  t.same(checkStructuredData(schema, { n: 1.5, ok: 'yes', when: '2026-13-40' }), {
    value: { n: null, ok: null, when: null },
    notes: [
      '"n": expected an integer, got 1.5; dropped',
      '"ok": expected true or false, got "yes"; dropped',
      '"when": expected a date (YYYY-MM-DD), got "2026-13-40"; dropped',
      '"n" is required but was not found',
    ],
  });
  t.same(checkStructuredData(schema, [1]).notes, ['the answer was not a JSON object; no field was kept']);
});
