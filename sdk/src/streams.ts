/**
 * Line readers for Parley's streamed answers, over a fetch body (a WHATWG ReadableStream in Node 20 and browsers):
 * NDJSON (the voice gate) and Server-Sent Events (chat with `accept: text/event-stream`).
 */

async function* textChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      yield decoder.decode(value, { stream: true });
    }
    const rest = decoder.decode();
    if (rest !== '') yield rest;
  } finally {
    // Leaving early (break, throw) cancels the body so the connection is released.
    reader.cancel().catch(() => undefined);
  }
}

/** One parsed JSON value per non-empty line. A line that is not JSON throws (the stream is broken). */
export async function* readNdjson<T = unknown>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  let pending = '';
  for await (const chunk of textChunks(body)) {
    pending += chunk;
    for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line !== '') yield JSON.parse(line) as T;
    }
  }
  if (pending.trim() !== '') yield JSON.parse(pending) as T;
}

export interface ServerSentEvent {
  /** The `event:` field; 'message' when absent. */
  event: string;
  data: string;
  id: string | undefined;
}

/** Server-Sent Events as the HTML standard parses them (fields event/data/id, comments ignored, blank line dispatches). */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  let pending = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  for await (const chunk of textChunks(body)) {
    pending += chunk;
    for (let nl = pending.search(/\r?\n|\r/); nl >= 0; nl = pending.search(/\r?\n|\r/)) {
      const line = pending.slice(0, nl);
      pending = pending.slice(pending[nl] === '\r' && pending[nl + 1] === '\n' ? nl + 2 : nl + 1);
      if (line === '') {
        if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), id };
        event = '';
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
  }
}
