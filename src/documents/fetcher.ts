import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, request } from 'undici';
import { publicAddressesOnly, type AddressPolicy } from './address-policy.js';

/**
 * The one way Parley fetches a URL somebody else chose (URL sources). Guards against SSRF:
 * - http(s) only, no credentials in the URL;
 * - the host is resolved here (all addresses); if any is not allowed by the policy, the fetch is refused;
 * - the connection is pinned to the checked address (undici `connect.lookup`), so a second DNS answer
 *   (rebinding) cannot send it elsewhere; TLS still verifies the original host name;
 * - redirects are followed by hand (at most `maxRedirects`), every hop checked again;
 * - the body is capped in bytes and the whole fetch in time.
 */
export type FetchFailure =
  'bad_url' | 'blocked_address' | 'dns' | 'too_many_redirects' | 'too_large' | 'timeout' | 'http_status' | 'network';

export class GuardedFetchError extends Error {
  readonly failure: FetchFailure;
  /** Worth trying again later (network trouble, timeouts, 5xx, 429); a refusal never is. */
  readonly retryable: boolean;
  readonly status: number | undefined;
  constructor(
    failure: FetchFailure,
    message: string,
    options: { retryable?: boolean; status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GuardedFetchError';
    this.failure = failure;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
  }
}

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

export interface GuardedFetchOptions {
  policy?: AddressPolicy;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  signal?: AbortSignal;
  /** DNS resolution (all addresses); injectable for tests of rebinding and mixed answers. */
  lookup?: LookupAll;
  userAgent?: string;
}

export interface FetchedResource {
  /** The final URL after redirects. */
  url: string;
  status: number;
  contentType: string | undefined;
  body: Buffer;
}

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Checks scheme and credentials; returns the parsed URL. */
export function parseFetchableUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GuardedFetchError('bad_url', 'The URL is not valid.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new GuardedFetchError('bad_url', 'Only http and https URLs can be fetched.');
  if (url.username !== '' || url.password !== '')
    throw new GuardedFetchError('bad_url', 'URLs with credentials are not fetched.');
  return url;
}

/** Resolves the URL's host and returns one allowed address to pin, or throws blocked_address. */
export async function resolveAllowed(
  url: URL,
  policy: AddressPolicy,
  lookup: LookupAll,
): Promise<{ address: string; family: 4 | 6 }> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let answers: Array<{ address: string; family: number }>;
  if (isIP(host)) answers = [{ address: host, family: isIP(host) }];
  else {
    try {
      answers = await lookup(host);
    } catch (cause) {
      throw new GuardedFetchError('dns', 'The host name could not be resolved.', { retryable: true, cause });
    }
  }
  if (answers.length === 0)
    throw new GuardedFetchError('dns', 'The host name could not be resolved.', { retryable: true });
  // Every answer must pass: a name that resolves to one public and one private address is refused.
  if (answers.some((a) => !policy.isAllowed(a.address))) {
    throw new GuardedFetchError(
      'blocked_address',
      'The URL points to a private, local or reserved network address, which is not allowed.',
    );
  }
  const chosen = answers[0]!;
  return { address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}

/**
 * One connection to the address {@link resolveAllowed} checked, whatever a later DNS answer says; connect, headers
 * and body each bounded by `timeoutMs`. URL sources, webhook deliveries and tool calls all go out through it.
 */
export function pinnedAgent(address: string, family: 4 | 6, timeoutMs: number): Agent {
  return new Agent({
    connections: 1,
    pipelining: 0,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: {
      timeout: timeoutMs,
      // Node may ask for all addresses (autoSelectFamily); either way, only the checked one is offered.
      lookup: ((_host: string, opts: { all?: boolean }, cb: (...args: unknown[]) => void) => {
        if (opts?.all) cb(null, [{ address, family }]);
        else cb(null, address, family);
      }) as never,
    },
  });
}

export async function guardedFetch(rawUrl: string, options: GuardedFetchOptions): Promise<FetchedResource> {
  const policy = options.policy ?? publicAddressesOnly;
  const lookup = options.lookup ?? defaultLookup;
  const maxRedirects = options.maxRedirects ?? 3;
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  let url = parseFetchableUrl(rawUrl);
  try {
    for (let hop = 0; ; hop++) {
      const { address, family } = await resolveAllowed(url, policy, lookup);
      signal.throwIfAborted();
      const agent = pinnedAgent(address, family, options.timeoutMs);
      try {
        const res = await request(url, {
          method: 'GET',
          dispatcher: agent,
          signal,
          headers: {
            'user-agent': options.userAgent ?? 'ParleyBot/1.0 (+knowledge ingestion)',
            accept: 'text/html, text/plain, text/markdown, application/pdf;q=0.9, */*;q=0.1',
          },
        });
        if (res.statusCode >= 300 && res.statusCode < 400 && res.headers['location'] !== undefined) {
          res.body.resume();
          await res.body.text().catch(() => undefined);
          if (hop >= maxRedirects)
            throw new GuardedFetchError('too_many_redirects', `The URL redirected more than ${maxRedirects} times.`);
          const location = String(
            Array.isArray(res.headers['location']) ? res.headers['location'][0] : res.headers['location'],
          );
          url = parseFetchableUrl(new URL(location, url).toString());
          continue;
        }
        if (res.statusCode < 200 || res.statusCode >= 300) {
          await res.body.dump().catch(() => undefined);
          throw new GuardedFetchError('http_status', `The URL answered HTTP ${res.statusCode}.`, {
            status: res.statusCode,
            retryable: res.statusCode >= 500 || res.statusCode === 429 || res.statusCode === 408,
          });
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (Number.isFinite(declared) && declared > options.maxBytes) {
          await res.body.dump().catch(() => undefined);
          throw tooLarge(options.maxBytes);
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > options.maxBytes) {
            res.body.destroy();
            throw tooLarge(options.maxBytes);
          }
          chunks.push(chunk);
        }
        const type = res.headers['content-type'];
        return {
          url: url.toString(),
          status: res.statusCode,
          contentType: Array.isArray(type) ? type[0] : type,
          body: Buffer.concat(chunks, size),
        };
      } finally {
        void agent.close().catch(() => undefined);
      }
    }
  } catch (err) {
    if (err instanceof GuardedFetchError) throw err;
    if (deadline.aborted)
      throw new GuardedFetchError('timeout', `The URL did not answer within ${options.timeoutMs} ms.`, {
        retryable: true,
        cause: err,
      });
    if (options.signal?.aborted) throw err;
    throw new GuardedFetchError('network', 'The URL could not be fetched (network error).', {
      retryable: true,
      cause: err,
    });
  }
}

function tooLarge(maxBytes: number): GuardedFetchError {
  return new GuardedFetchError('too_large', `The page is larger than ${maxBytes} bytes.`);
}
