import { request, type Agent } from 'undici';
import {
  GuardedFetchError,
  parseFetchableUrl,
  pinnedAgent,
  resolveAllowed,
  type AddressPolicy,
  type LookupAll,
} from '../documents/index.js';
import { lookup as dnsLookup } from 'node:dns/promises';

/** What one POST to an endpoint came to. `status` is absent when no HTTP answer arrived. */
export interface SendResult {
  status?: number;
  /** A short, owner-facing description of a failure (no response bodies, no secrets). */
  error?: string;
}

export interface SendOptions {
  policy: AddressPolicy;
  timeoutMs: number;
  signal: AbortSignal;
  lookup?: LookupAll;
}

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * POSTs one signed webhook through the same address policy as URL document sources: the host is resolved here and
 * every answer must pass, the connection is pinned to the checked address (a second DNS answer cannot move it), and
 * redirects are not followed (a 3xx is a failed attempt), so no hop ever reaches an address the policy refuses.
 * The whole attempt is bounded by `timeoutMs`; at most 1 KiB of the answer is read.
 */
export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = AbortSignal.any([options.signal, deadline]);
  let agent: Agent | undefined;
  try {
    const url = parseFetchableUrl(rawUrl);
    const { address, family } = await resolveAllowed(url, options.policy, options.lookup ?? defaultLookup);
    agent = pinnedAgent(address, family, options.timeoutMs);
    const res = await request(url, {
      method: 'POST',
      dispatcher: agent,
      signal,
      headers: { 'content-type': 'application/json', 'user-agent': 'Parley-Webhooks/1.0', ...headers },
      body,
    });
    // The answer's body is not used: read a little so the connection ends cleanly, then drop the rest.
    let read = 0;
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      read += chunk.length;
      if (read > 1024) {
        res.body.destroy();
        break;
      }
    }
    return { status: res.statusCode };
  } catch (err) {
    if (err instanceof GuardedFetchError) return { error: err.message };
    if (deadline.aborted) return { error: `no answer within ${Math.round(options.timeoutMs / 1000)} s` };
    if (options.signal.aborted) throw err;
    const code = (err as { code?: string }).code;
    return { error: code ? `network error (${code})` : 'network error' };
  } finally {
    if (agent) void agent.close().catch(() => undefined);
  }
}
