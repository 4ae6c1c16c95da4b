import t from 'tap';
import { allowAlso, publicAddressesOnly } from '../../src/documents/index.js';
import { argumentIssues, schemaIssues } from '../../src/tools/json-schema.js';
import { callTool } from '../../src/tools/caller.js';
import { matchExamples, valueFromReply } from '../../src/providers/chat/tool-examples.js';
import { newEndpointSecret } from '../../src/webhooks/index.js';
import { startToolReceiver } from './helpers.js';

const context = { conversationId: 'conv_x', assistantId: 'a', source: 'api', messages: [] };

t.test('a receiver on a private address is refused at call time unless the policy allows it', async (t) => {
  const receiver = await startToolReceiver(t);
  const secret = newEndpointSecret();
  const tool = {
    name: 'order_status',
    parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
    url: receiver.url,
    timeoutMs: 10_000,
  };
  const refused = await callTool(
    { secrets: async () => [secret], policy: publicAddressesOnly },
    tool,
    'tcall_1',
    { orderId: '1' },
    context,
  );
  t.match(refused, { status: 'failed', sent: false, error: /private, local or reserved/ });
  t.equal(receiver.received.length, 0, 'nothing reached the receiver');
  const allowed = await callTool(
    { secrets: async () => [secret], policy: allowAlso(['127.0.0.1']) },
    tool,
    'tcall_2',
    { orderId: '1' },
    context,
  );
  t.match(allowed, { status: 'succeeded', sent: true, result: { status: 'shipped' } });
  const invalid = await callTool(
    { secrets: async () => [secret], policy: allowAlso(['127.0.0.1']) },
    tool,
    'tcall_3',
    {},
    context,
  );
  t.match(invalid, { status: 'failed', sent: false, error: 'invalid arguments: arguments.orderId is required' });
  t.equal(receiver.received.length, 1, 'invalid arguments never reach the receiver');
});

t.test('the schema subset and the argument check', async (t) => {
  const schema = {
    type: 'object',
    properties: {
      email: { type: 'string', format: 'email' },
      day: { type: 'string', format: 'date' },
      seats: { type: 'integer', minimum: 1, maximum: 8 },
      kind: { type: 'string', enum: ['table', 'bar'] },
      tags: { type: 'array', items: { type: 'string' }, maxItems: 2 },
      address: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
    required: ['email', 'seats'],
  };
  t.same(schemaIssues(schema), []);
  t.same(
    argumentIssues(
      { email: 'a@b.co', day: '2026-12-01', seats: 2, kind: 'bar', tags: ['x'], address: { city: 'Oslo' } },
      schema,
    ),
    [],
  );
  t.same(
    argumentIssues(
      { email: 'nope', day: '12/01', seats: 2.5, kind: 'booth', tags: ['a', 'b', 'c'], address: {}, extra: 1 },
      schema,
    ).map((i) => i.path),
    [
      'arguments.email',
      'arguments.day',
      'arguments.seats',
      'arguments.kind',
      'arguments.tags',
      'arguments.address.city',
      'arguments.extra',
    ],
  );
  t.same(
    schemaIssues({ type: 'object', properties: { a: { type: 'array' }, b: { type: 'string', format: 'uri' } } }).map(
      (i) => i.path,
    ),
    ['body.parameters.properties.a.items', 'body.parameters.properties.b.format'],
  );
});

t.test('examples with slots: values of simple types from the question, missing required ones named', async (t) => {
  const tool = {
    name: 'book',
    parameters: {
      type: 'object',
      properties: {
        seats: { type: 'integer' },
        day: { type: 'string', format: 'date' },
        email: { type: 'string', format: 'email' },
      },
      required: ['seats', 'day', 'email'],
    },
    examples: ['book {seats} seats on {day} for {email}', 'book a table'],
  };
  t.same(matchExamples('Please book 4 seats on 2026-12-24 for ann@example.com!', tool), {
    args: { seats: 4, day: '2026-12-24', email: 'ann@example.com' },
    missing: [],
  });
  t.same(matchExamples('can you book a table for 2 on 2026-12-24', tool), {
    args: { seats: 2, day: '2026-12-24' },
    missing: ['email'],
  });
  t.equal(matchExamples('what are your opening hours?', tool), undefined);
  t.equal(valueFromReply("it's bob@example.com", 'email', tool), 'bob@example.com');
  t.equal(valueFromReply('no idea', 'email', tool), undefined);
});
