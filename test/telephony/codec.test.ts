import t from 'tap';
import { readCarrierMessage } from '../../src/voice/transports/twilio/codec.js';

/**
 * The carrier's frames as Parley reads them: a plain `media` or `mark` frame (the 50-a-second cases) is read without
 * a JSON parse and gives what a parse would; any other shape of it is parsed in full, so nothing a carrier may legally
 * write (escaped characters, another key order) is lost, and what is not its protocol is ignored.
 */
const frame = (text: string) => {
  const bytes = new TextEncoder().encode(text);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
};
const MAX = 64 * 1024;

t.test('media frames, as carriers write them and otherwise', async (t) => {
  const payload = Buffer.from([0xff, 0x7f, 0x00, 0x10, 0x20]).toString('base64');
  const plain = `{"event":"media","sequenceNumber":"3","media":{"track":"inbound","chunk":"1","timestamp":"5","payload":"${payload}"},"streamSid":"MZ1"}`;
  t.same(readCarrierMessage(frame(plain), MAX), { event: 'media', payload }, 'the carrier’s own layout');
  const escaped = `{"event":"media","media":{"payload":"${payload.replace('/', '\\/')}"},"streamSid":"MZ1"}`;
  t.same(
    readCarrierMessage(frame(`{"event":"media","media":{"payload":"ab\\/cd"}}`), MAX),
    { event: 'media', payload: 'ab/cd' },
    'an escaped payload is parsed in full',
  );
  t.same(readCarrierMessage(frame(escaped), MAX)?.event, 'media');
  t.same(
    readCarrierMessage(frame(`{"streamSid":"MZ1","event":"media","media":{"payload":"${payload}"}}`), MAX),
    { event: 'media', payload },
    'another key order is parsed in full',
  );
  t.equal(readCarrierMessage(frame('{"event":"media","media":{}}'), MAX), undefined, 'no payload: ignored');
  t.equal(readCarrierMessage(frame('{"event":"media",}'), MAX), undefined, 'not JSON: ignored');
  t.equal(readCarrierMessage(frame(plain), 16), undefined, 'past the frame limit: ignored');
});

t.test('the other events', async (t) => {
  t.same(readCarrierMessage(frame('{"event":"connected","protocol":"Call"}'), MAX), { event: 'connected' });
  t.same(
    readCarrierMessage(
      frame(
        '{"event":"start","start":{"streamSid":"MZ1","callSid":"CA1","customParameters":{"token":"v1.x"}},"streamSid":"MZ1"}',
      ),
      MAX,
    ),
    { event: 'start', streamSid: 'MZ1', callSid: 'CA1', token: 'v1.x' },
  );
  t.same(
    readCarrierMessage(frame('{"event":"mark","sequenceNumber":"4","streamSid":"MZ1","mark":{"name":"a7"}}'), MAX),
    { event: 'mark', name: 'a7' },
    'a mark as the carrier echoes it',
  );
  t.same(readCarrierMessage(frame('{"event":"mark","mark":{"name":"caf\\u00e9"}}'), MAX), {
    event: 'mark',
    name: 'café',
  });
  t.same(readCarrierMessage(frame('{"event":"mark","mark":{"name":"café"}}'), MAX), { event: 'mark', name: 'café' });
  t.same(readCarrierMessage(frame('{"event":"dtmf","dtmf":{"digit":"5"}}'), MAX), { event: 'dtmf', digit: '5' });
  t.equal(readCarrierMessage(frame('{"event":"dtmf","dtmf":{"digit":"55"}}'), MAX), undefined, 'one key only');
  t.same(readCarrierMessage(frame('{"event":"stop"}'), MAX), { event: 'stop' });
  t.equal(readCarrierMessage(frame('not json'), MAX), undefined);
  t.equal(readCarrierMessage(frame('{"event":"nope"}'), MAX), undefined);
});
