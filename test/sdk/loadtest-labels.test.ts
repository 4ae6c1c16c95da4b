import t from 'tap';
import { LATENCY_LABELS, NO_ROUTE_KEY } from '../../sdk/src/cli/loadtest/labels.js';
import { instancesText } from '../../sdk/src/cli/loadtest/summary.js';

t.test('the load tool says what each latency measures', async (t) => {
  t.match(LATENCY_LABELS.firstAudio, /from dialing/, 'the client figure: from dialing');
  t.match(LATENCY_LABELS.turn, /speech end -> answer/, "the server's: from the end of speech to the answer");
});

t.test('calls per instance: "1 instance" on one instance, never "unknown"', async (t) => {
  t.equal(instancesText({ [NO_ROUTE_KEY]: 5 }), '1 instance: 5 calls', 'a server without a route key is one instance');
  t.equal(instancesText({ n1: 5 }), 'n1: 5 (1 instance)');
  t.equal(instancesText({ n1: 3, n2: 2 }), 'n1: 3, n2: 2 (2 instances)');
  t.equal(instancesText({}), 'none');
});
