import t from 'tap';
import { spokenAnswer, speakable } from '../../../src/providers/voice/local/answer.js';
import { Resampler, decodeFrame, encodeSamples } from '../../../src/providers/voice/local/audio.js';
import { arpaBigram, numberWords, spokenWords, withDigits } from '../../../src/providers/voice/local/language-model.js';
import { ProcessLimiter, parseRecognition } from '../../../src/providers/voice/local/recognizer.js';
import { LocalVoiceTools } from '../../../src/providers/voice/local/tools.js';
import { EndOfSpeech, LOCAL_VOICE_DEFAULTS } from '../../../src/providers/voice/local/vad.js';

t.test('numbers and prices are spelt as a speaker says them', async (t) => {
  t.equal(numberWords(4), 'four');
  t.equal(numberWords(99), 'ninety nine');
  t.equal(numberWords(2024), 'two thousand twenty four');
  t.same(spokenWords('It costs €4.99 at 9:30, 1,200 users (50%).'), [
    'it',
    'costs',
    'four',
    'point',
    'nine',
    'nine',
    'at',
    'nine',
    'thirty',
    'one',
    'thousand',
    'two',
    'hundred',
    'users',
    'fifty',
    'percent',
  ]);
});

t.test('numbers a caller says are digits again for a tool argument', async (t) => {
  t.equal(withDigits('what is the status order one two three four five'), 'what is the status order 12345');
  t.equal(withDigits('order twelve thousand three hundred and forty five please'), 'order 12345 please');
  t.equal(withDigits('twelve thirty four'), '1234', 'pairs read out one after another');
  t.equal(withDigits('twenty one and a hundred people'), '21 and a hundred people', 'a lone multiplier stays a word');
  t.equal(withDigits('two thousand and five'), '2005');
  t.equal(withDigits('three hundred and fun'), '300 and fun');
  t.equal(
    withDigits('status of order want to three four five'),
    'status of order 12345',
    '"one two" heard as "want to"',
  );
  t.equal(withDigits('i want to know'), 'i want to know');
  t.equal(withDigits('a table for two'), 'a table for 2', 'a homophone next to one number stays a word');
});

t.test('the ARPA model is well formed: counts match, every bigram history is a unigram', async (t) => {
  const arpa = arpaBigram([
    ['the', 'plan', 'costs'],
    ['the', 'office'],
  ]);
  const lines = arpa.split('\n');
  const n1 = Number(/ngram 1=(\d+)/.exec(arpa)![1]);
  const n2 = Number(/ngram 2=(\d+)/.exec(arpa)![1]);
  const uni = lines.slice(lines.indexOf('\\1-grams:') + 1, lines.indexOf('\\2-grams:') - 1);
  const bi = lines.slice(lines.indexOf('\\2-grams:') + 1, lines.indexOf('\\end\\') - 1);
  t.equal(uni.length, n1);
  t.equal(bi.length, n2);
  const words = new Set(uni.map((l) => l.split(' ')[1]));
  t.same([...words].sort(), ['</s>', '<s>', 'costs', 'office', 'plan', 'the']);
  for (const l of bi) {
    const [p, h, w] = l.split(' ');
    t.ok(Number(p) < 0 && words.has(h) && words.has(w), l);
  }
});

t.test('the spoken answer quotes the sentence that answers, without marks', async (t) => {
  const passages =
    '… ## Plans\n\nThe free plan allows three notebooks. The **premium plan** costs 4.99 euros per month. See [billing](https://x.example).';
  t.equal(
    spokenAnswer(passages, 'how much does the premium plan cost'),
    'The premium plan costs 4.99 euros per month.',
  );
  t.equal(
    spokenAnswer('I could not find that in the documents I have.', 'what is the weather'),
    'I could not find that in the documents I have.',
  );
  t.equal(speakable('**bold** and `code` [link](http://a)'), 'bold and code link');
  t.ok(spokenAnswer('word '.repeat(200) + '.', 'word').length <= 281, 'bounded');
});

t.test('resampling keeps the duration across chunks; G.711 round trips', async (t) => {
  const down = new Resampler(24000, 16000);
  let out = 0;
  for (let i = 0; i < 50; i++) out += down.push(new Int16Array(480).fill(1000)).length;
  t.ok(Math.abs(out - 16000) <= 2, `1 s at 24 kHz is 1 s at 16 kHz (${out})`);
  const up = new Resampler(8000, 16000);
  out = 0;
  for (let i = 0; i < 50; i++) out += up.push(new Int16Array(160)).length;
  t.ok(Math.abs(out - 16000) <= 2);
  for (const format of ['pcmu', 'pcma'] as const) {
    const audio = { format, sampleRateHz: 8000 } as const;
    const samples = Int16Array.from([0, 1000, -1000, 12000, -30000]);
    const back = decodeFrame(encodeSamples(samples, audio), audio);
    t.ok(
      [...samples].every((s, i) => Math.abs(s - back[i]!) <= Math.max(16, Math.abs(s) / 16)),
      `${format} round trip`,
    );
  }
});

t.test('end of speech: an utterance starts on voice, ends after the silence, short bursts are ignored', async (t) => {
  const heard: Array<[number, number, number]> = [];
  let starts = 0;
  const vad = new EndOfSpeech(LOCAL_VOICE_DEFAULTS, {
    onSpeechStart: () => starts++,
    onUtterance: (pcm, start, end) => heard.push([pcm.length, start, end]),
  });
  const tone = (ms: number) => Int16Array.from({ length: ms * 16 }, (_, i) => Math.round(6000 * Math.sin(i / 3)));
  const quiet = (ms: number) => new Int16Array(ms * 16);
  vad.push(quiet(1000));
  vad.push(tone(100)); // a click: too short
  vad.push(quiet(1000));
  t.equal(heard.length, 0, 'a 100 ms burst is not an utterance');
  t.equal(starts, 1, 'but it did stop the assistant (barge-in is immediate)');
  vad.push(tone(1500));
  vad.push(quiet(400));
  t.equal(heard.length, 0, 'a pause shorter than the end-of-speech silence goes on');
  vad.push(tone(500));
  vad.push(quiet(700));
  t.equal(heard.length, 1);
  const [samples, start, end] = heard[0]!;
  t.ok(start >= 2100 - 300 - 70 && start <= 2100, `starts at the voice, with pre-roll (${start})`);
  t.ok(end >= 4500 && end <= 4500 + 200, `ends at the voice, with a short tail (${end})`);
  t.equal(samples, (end - start) * 16);
  vad.skip(16_000);
  vad.push(tone(300));
  vad.push(quiet(700));
  t.ok(heard[1]![1] > 6000, 'muted audio still moves the timeline');
});

t.test('recognizer output is parsed into timed words; fillers dropped', async (t) => {
  const out =
    'hello there\n<s> 0.000 0.300 1.0\nhello 0.310 0.600 0.9\n<sil> 0.6 0.7 1\n[NOISE] 0.700 0.800 1.0\nthere(2) 0.810 1.100 0.8\n</s> 1.1 1.2 1\n';
  t.same(parseRecognition(out, 300), [
    { word: 'hello', startMs: 10, endMs: 300 },
    { word: 'there', startMs: 510, endMs: 800 },
  ]);
});

t.test('the process limiter bounds running and waiting work', async (t) => {
  const limiter = new ProcessLimiter(1, 1);
  let release!: () => void;
  const first = limiter.run(() => new Promise<void>((r) => (release = r)));
  const second = limiter.run(async () => 'second');
  await t.rejects(
    limiter.run(async () => 'third'),
    /busy/,
    'beyond the waiting bound it refuses at once',
  );
  release();
  await first;
  t.equal(await second, 'second');
});

t.test(
  "an async tool's late result is stated once when it arrives; a failure already said is not said again",
  async (t) => {
    const tools = new LocalVoiceTools([
      {
        name: 'order_status',
        description: 'Looks up an order.',
        parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        examples: ['status of order {orderId}'],
      },
    ]);
    const ask = () => {
      const step = tools.step('what is the status of order one two three');
      if (step.kind !== 'call') throw new Error(`expected a call, got ${step.kind}`);
      return step.call;
    };
    const first = ask();
    t.same(JSON.parse(first.arguments), { orderId: '123' });
    tools.command({ type: 'function_output', callId: first.id, output: '{"status":"started","toolCallId":"tcall_1"}' });
    t.equal(tools.command({ type: 'respond' }), 'Order status has started; the result will follow.');
    const late = (callId: string, output: string) =>
      tools.command({ type: 'message', text: 'arrived', toolResult: { callId, name: 'order_status', output } });
    t.equal(late('call_unknown', '{"result":{"status":"lost"}}'), undefined);
    t.equal(tools.command({ type: 'respond' }), undefined, 'a result of a call it never made is not said');
    late(first.id, '{"result":{"status":"delivered"}}');
    t.equal(tools.command({ type: 'respond' }), 'Order status: status delivered.');
    late(first.id, '{"result":{"status":"delivered"}}');
    t.equal(tools.command({ type: 'respond' }), undefined, 'said once');

    const second = ask();
    tools.command({
      type: 'function_output',
      callId: second.id,
      output: '{"status":"started","toolCallId":"tcall_2"}',
    });
    tools.command({ type: 'respond' });
    late(second.id, '{"error":"HTTP 500","message":"I could not reach the order system."}');
    t.equal(tools.command({ type: 'respond' }), undefined, 'the failed message was said by the call');
  },
);
