import type { Test } from 'tap';
import type { ChatCompletionRequest, ChatProvider, ChatStreamEvent } from '../../../src/providers/chat/index.js';

/** What every chat provider must do, whatever is behind it. */
export function chatProviderContract(t: Test, name: string, make: (t: Test) => Promise<ChatProvider>): void {
  const request: ChatCompletionRequest = {
    messages: [
      { role: 'system', content: 'Answer from the passages.' },
      { role: 'user', content: 'How long is the refund window?' },
    ],
    passages: [
      {
        documentName: 'Handbook',
        heading: 'Refunds',
        content: 'Customers can request a refund within 30 days of delivery.',
      },
    ],
    question: 'How long is the refund window?',
    voiceUnavailable: false,
    maxOutputTokens: 256,
  };

  t.test(`${name}: streams text, then one usage event last`, async (t) => {
    const provider = await make(t);
    const events: ChatStreamEvent[] = [];
    for await (const ev of provider.stream(request, new AbortController().signal)) events.push(ev);
    const texts = events.filter((e) => e.type === 'text');
    t.ok(texts.length >= 1, 'at least one text event');
    t.ok(
      texts
        .map((e) => (e as { text: string }).text)
        .join('')
        .trim().length > 0,
      'a non-empty answer',
    );
    const usage = events.filter((e) => e.type === 'usage');
    t.equal(usage.length, 1, 'exactly one usage event');
    t.equal(events.at(-1)?.type, 'usage', 'usage comes last');
    const u = usage[0] as { inputTokens: number; outputTokens: number };
    t.ok(u.inputTokens > 0 && u.outputTokens > 0, 'token counts are positive');
    t.ok(provider.model.length > 0, 'names its model');
  });

  t.test(`${name}: stops when the caller aborts`, async (t) => {
    const provider = await make(t);
    const controller = new AbortController();
    let texts = 0;
    let failure: string | undefined;
    try {
      for await (const ev of provider.stream(request, controller.signal)) {
        if (ev.type === 'text') texts++;
        controller.abort();
      }
    } catch (err) {
      failure = (err as { failure?: string }).failure;
    }
    t.ok(texts <= 2, `no more than a piece in flight after the abort (${texts})`);
    t.ok(
      failure === undefined || failure === 'aborted' || failure === 'interrupted',
      `ends quietly or as aborted (${failure})`,
    );
  });
}
