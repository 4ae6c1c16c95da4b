import fc from 'fast-check';
import type { AnyRoute } from '../../src/http/index.js';
import { arbitraryOf, corrupt, hostileString, hostileValue, toQueryPairs } from './arbitraries.js';
import { buildRaw } from './raw.js';
import { WIDGET_ORIGIN, type ResourceType, type World } from './world.js';

/**
 * Fuzz cases generated from the live route table: every route, every auth mode, schema-shaped values with hostile
 * ones mixed in, and the transport faults a real network or a careless client produces.
 */

/** Path parameter name -> the resource it names. A route with a parameter missing here fails the cross-account matrix. */
export const PARAM_RESOURCES: Record<string, ResourceType> = {
  assistantId: 'assistant',
  publicId: 'publicAssistant',
  documentId: 'document',
  conversationId: 'conversation',
  keyId: 'key',
  sessionId: 'voiceSession',
  evalId: 'eval',
  id: 'account',
  planCode: 'plan',
  endpointId: 'webhookEndpoint',
  deliveryId: 'webhookDelivery',
  visitorId: 'visitor',
  userId: 'user',
  phoneNumberId: 'phoneNumber',
  toolId: 'tool',
  callId: 'call',
  batchId: 'callBatch',
  scenarioId: 'scenario',
  runId: 'scenarioRun',
};

export const ACTORS = [
  'none',
  'bearer',
  'bad-bearer',
  'cookie',
  'cookie-foreign-origin',
  'operator',
  'keyless',
] as const;
export type Actor = (typeof ACTORS)[number];

export type CaseKind = 'http' | 'truncated-end' | 'truncated-hold' | 'raw-line' | 'raw-header';

export interface FuzzCase {
  kind: CaseKind;
  label: string;
  bytes: Buffer;
  after: 'end' | 'hold' | 'wait';
}

const TRANSPORTS = [
  'normal',
  'normal',
  'normal',
  'normal',
  'normal',
  'normal',
  'normal',
  'normal',
  'sse',
  'wrong-type',
  'no-type',
  'duplicate-header',
  'bad-json',
  'huge-number',
  'chunked',
  'truncated-end',
  'truncated-hold',
] as const;
type Transport = (typeof TRANSPORTS)[number];

const WRONG_TYPES = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zz',
  'application/json; charset=utf-16',
  'application/xml',
  'application/jsonx',
  '*/*',
  'application/json, text/plain',
];

/** Request lines uWS's parser refuses (answered by uWS itself) and header blocks it never finishes reading. */
const RAW_LINES = [
  'GET /readyz HTTP/1.1 extra',
  'G\u0000T /readyz HTTP/1.1',
  'GET  /readyz HTTP/1.1',
  'GET /readyz HTTP/9.9',
  'GET http://x/readyz HTTP/1.1',
  '\u0016\u0003\u0001\u0002\u0000',
  'GET /readyz HTTP/1.1\n',
  'POST /api/v1/chat HTTP/1.0',
];
const HOSTILE_PATH = [
  '../../etc/passwd',
  '..%2f..%2fetc',
  'a\u0000b',
  '\ud800',
  '%',
  'x'.repeat(300),
  'assets/../../package.json',
];
const RAW_HEADERS = [
  'x-a b',
  'x-a: a\u0000b',
  'x-a: a\u0001b',
  'authorization: bearer \u0000',
  'host : x',
  'x-a: a\r\n b',
];

interface RouteDraft {
  actor: Actor;
  keyName: string;
  params: Array<{ pick: number; hostile: string }>;
  query: unknown;
  queryCorruption: [number, string] | null;
  body: unknown;
  bodyCorruption: [number, unknown] | null;
  transport: Transport;
  variant: number;
  idPick: number;
}

export function caseArbitrary(world: World, routes: readonly AnyRoute[]): fc.Arbitrary<FuzzCase> {
  const keyNames = Object.keys(world.b.keys);
  const routeCase = fc.nat(routes.length - 1).chain((index) => {
    const route = routes[index]!;
    const paramCount = route.path.split('/').filter((s) => s.startsWith(':')).length;
    const draft: fc.Arbitrary<RouteDraft> = fc.record({
      actor: fc.constantFrom(...ACTORS),
      keyName: fc.constantFrom(...keyNames),
      params: fc.array(
        fc.record({ pick: fc.nat(99), hostile: fc.oneof(hostileString, fc.string({ maxLength: 30 })) }),
        { minLength: paramCount, maxLength: paramCount },
      ),
      query: route.schemas.query
        ? fc.option(arbitraryOf(route.schemas.query), { nil: null, freq: 5 })
        : fc.constant(null),
      queryCorruption: fc.option(fc.tuple(fc.nat(1000), hostileString), { nil: null, freq: 3 }),
      body: route.schemas.body ? arbitraryOf(route.schemas.body) : fc.constant(undefined),
      bodyCorruption: fc.option(fc.tuple(fc.nat(1000), hostileValue), { nil: null, freq: 2 }),
      transport: fc.constantFrom(...TRANSPORTS),
      variant: fc.nat(1000),
      idPick: fc.nat(99),
    });
    return draft.map((d) => buildRouteCase(world, route, d));
  });
  const rawCase = fc
    .record({
      line: fc.constantFrom(...RAW_LINES),
      header: fc.option(fc.constantFrom(...RAW_HEADERS), { nil: null, freq: 2 }),
    })
    .map(({ line, header }): FuzzCase => {
      if (header !== null) {
        return {
          kind: 'raw-header',
          label: `raw header ${JSON.stringify(header)}`,
          bytes: Buffer.from(`GET /readyz HTTP/1.1\r\nhost: 127.0.0.1\r\n${header}\r\n\r\n`, 'latin1'),
          after: 'wait',
        };
      }
      return {
        kind: 'raw-line',
        label: `raw request line ${JSON.stringify(line)}`,
        bytes: Buffer.from(`${line}\r\nhost: 127.0.0.1\r\n\r\n`, 'latin1'),
        after: 'wait',
      };
    });
  return fc.oneof({ weight: 97, arbitrary: routeCase }, { weight: 3, arbitrary: rawCase });
}

/** Fills a path parameter: the actor's own resource, the other tenant's, or a hostile string. */
function paramValue(world: World, route: AnyRoute, name: string, p: { pick: number; hostile: string }): string {
  const type = PARAM_RESOURCES[name];
  // Operator routes and deletions of the actor's own resources would change the world for the rest of the run.
  const mayUseOwn = route.method !== 'DELETE' && !route.path.startsWith('/api/admin/');
  const mayUseVictim = !route.path.startsWith('/api/admin/');
  if (type !== undefined) {
    if (p.pick < 40 && mayUseOwn) return world.b.ids[type];
    if (p.pick < 60 && mayUseVictim) return world.a.ids[type];
  }
  return p.hostile;
}

/** Fields of bodies that name resources: filled with real ids often enough to get past the first 404. */
function withRealIds(world: World, route: AnyRoute, actor: Actor, body: unknown, pick: number): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const out = { ...(body as Record<string, unknown>) };
  const tenant = pick % 10 < 7 ? world.b : world.a;
  const use = pick % 3 !== 0;
  if (!use) return out;
  if ('assistantId' in out || route.path === '/api/v1/chat' || route.path === '/api/v1/voice/sessions') {
    out['assistantId'] = actor === 'keyless' || pick % 2 === 0 ? tenant.assistant.publicId : tenant.assistant.id;
  }
  if ('conversationId' in out)
    out['conversationId'] = pick % 4 === 0 ? tenant.apiConversationId : tenant.widgetConversationId;
  if ('messageId' in out) out['messageId'] = pick % 4 === 0 ? tenant.apiMessageId : tenant.widgetMessageId;
  // Credentials are always the actor's own (B's visitor, B's control token): A's ids, never A's identity.
  if ('visitorId' in out || actor === 'keyless') out['visitorId'] = world.b.visitorId;
  if (route.auth === 'control-token') out['token'] = world.b.voiceControlToken;
  if (route.path === '/api/v1/voice/sessions') out['capabilities'] = ['heartbeat', 'playback_gate'];
  return out;
}

function authHeaders(world: World, route: AnyRoute, d: RouteDraft): Array<[string, string]> {
  const origin = world.app.url;
  switch (d.actor) {
    case 'none':
      return [];
    case 'bearer':
      return [['authorization', `Bearer ${world.b.keys[d.keyName]}`]];
    case 'bad-bearer':
      return [
        [
          'authorization',
          ['Bearer sk_live_xxxxxxxx', 'Basic Zm9vOmJhcg==', 'Bearer', `Bearer ${world.b.keys['all']}x`, 'bearer  x y'][
            d.variant % 5
          ]!,
        ],
      ];
    case 'cookie':
      // Logging out with the actor's own cookie would end its session for the rest of the run.
      return route.path === '/api/auth/logout'
        ? [
            ['cookie', 'parley_session=fuzz'],
            ['origin', origin],
          ]
        : [
            ['cookie', world.b.cookie],
            ['origin', origin],
          ];
    case 'cookie-foreign-origin':
      return [
        ['cookie', world.b.cookie],
        ['origin', 'https://evil.example'],
      ];
    case 'operator':
      return route.path === '/api/auth/logout'
        ? [['origin', origin]]
        : [
            ['cookie', world.operatorCookie],
            ['origin', origin],
          ];
    case 'keyless':
      return [['origin', WIDGET_ORIGIN]];
  }
}

function bodyText(
  route: AnyRoute,
  d: RouteDraft,
  body: unknown,
): { text: Buffer | undefined; contentType: string | undefined } {
  if (route.method === 'GET' || route.method === 'DELETE') return { text: undefined, contentType: undefined };
  if (route.rawBody && route.path.includes('/uploads')) {
    const filenames = [
      'notes.txt',
      'a\u0000b.txt',
      '\ud800.md',
      '../../etc/passwd',
      'x'.repeat(400) + '.txt',
      'page.html',
      'doc.pdf',
      '',
    ];
    const name = filenames[d.variant % filenames.length]!;
    const content = [
      'Plain text about prices: 4.99 euros.',
      '%PDF-1.4 not really',
      '<html><title>&#0;</title><body>&#xD800;x</body></html>',
      '\u0000\u0001binary',
    ][d.variant % 4]!;
    if (d.variant % 3 === 0) return { text: Buffer.from(content), contentType: 'text/plain' };
    const boundary = 'fuzzb';
    return {
      text: Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`,
        'utf8',
      ),
      contentType: `multipart/form-data; boundary=${boundary}`,
    };
  }
  let value = body;
  if (d.bodyCorruption) value = corrupt(value, d.bodyCorruption[0], d.bodyCorruption[1]);
  if (value === undefined) return { text: undefined, contentType: 'application/json' };
  let json = JSON.stringify(value);
  if (d.transport === 'bad-json') {
    const mutations = [
      json.slice(0, Math.max(0, json.length - 1 - (d.variant % 5))),
      `${json} trailing`,
      `\ufeff${json}`,
      json.replace(/"/g, "'"),
      `${json}${json}`,
      '{"a":NaN}',
      '',
      '{"a":1,"a":2}',
      '['.repeat(5000),
    ];
    json = mutations[d.variant % mutations.length]!;
  }
  if (d.transport === 'huge-number' && json.startsWith('{') && json.length > 2) {
    json = `{"n${d.variant % 3}":${['1e400', '-1e400', '123456789012345678901234567890', '1e-400', '-0'][d.variant % 5]},${json.slice(1)}`;
  }
  return { text: Buffer.from(json, 'utf8'), contentType: 'application/json' };
}

/** Percent-encoding that also encodes lone surrogates (as their WTF-8 bytes, %ED%A0%80), as a hostile client would. */
export function encodeAny(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    let out = '';
    for (const ch of text) {
      const code = ch.codePointAt(0)!;
      if (code >= 0xd800 && code <= 0xdfff)
        out +=
          `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase();
      else out += encodeURIComponent(ch);
    }
    return out;
  }
}

function buildRouteCase(world: World, route: AnyRoute, d: RouteDraft): FuzzCase {
  const names = route.path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
  let path = route.path;
  names.forEach((name, i) => {
    path = path.replace(`:${name}`, encodeAny(paramValue(world, route, name, d.params[i]!)));
  });
  if (route.path.endsWith('/*'))
    path = path.replace(
      '/*',
      `/${encodeAny(d.variant % 2 === 0 ? 'index.html' : HOSTILE_PATH[d.variant % HOSTILE_PATH.length]!)}`,
    );
  let pairs = toQueryPairs(d.query);
  if (d.queryCorruption) {
    const [pick, hostile] = d.queryCorruption;
    const keys = pairs.map(([k]) => k);
    const key =
      keys.length > 0 && pick % 3 !== 0
        ? keys[pick % keys.length]!
        : ['cursor', 'limit', 'from', 'to', 'assistantId', 'filename', 'x'][pick % 7]!;
    pairs = [...pairs.filter(([k]) => k !== key), [key, hostile]];
  }
  const query = pairs.map(([k, v]) => `${encodeAny(k)}=${encodeAny(v)}`).join('&');
  const target = query ? `${path}?${query}` : path;

  const body = withRealIds(world, route, d.actor, d.body, d.idPick);
  const { text, contentType } = bodyText(route, d, body);
  const headers: Array<[string, string]> = [['host', `127.0.0.1:${world.app.port}`], ...authHeaders(world, route, d)];
  if (route.path === '/api/webhooks/polar') {
    headers.push(
      ['webhook-id', `msg_${d.variant}`],
      ['webhook-timestamp', String([Math.floor(Date.now() / 1000), 0, 99999999999, -1][d.variant % 4])],
      ['webhook-signature', `v1,${Buffer.from(String(d.variant)).toString('base64')}`],
    );
  }
  // The carrier's call webhook is unauthenticated by design: a signature of the right shape, never the right one.
  if (route.path === '/api/v1/telephony/twilio/voice' && d.variant % 2 === 0) {
    headers.push(['x-twilio-signature', Buffer.from(`sig-${d.variant}`.padEnd(20, '.')).toString('base64')]);
  }
  const type =
    d.transport === 'wrong-type'
      ? WRONG_TYPES[d.variant % WRONG_TYPES.length]!
      : d.transport === 'no-type'
        ? undefined
        : contentType;
  if (text !== undefined && type !== undefined) headers.push(['content-type', type]);
  if (d.transport === 'sse') headers.push(['accept', 'text/event-stream']);
  if (d.variant % 4 === 0)
    headers.push(['x-request-id', ['ok-id-1', 'x'.repeat(200), 'bad id with spaces', ''][(d.variant % 16) / 4] ?? 'x']);
  let contentLength: number | 'omit' | undefined;
  if (d.transport === 'duplicate-header') {
    const dup: Array<[string, string]> = [
      ['host', 'evil.example'],
      ['content-type', 'text/plain'],
      ['authorization', `Bearer ${world.b.keys['all']}`],
      ['origin', 'https://evil.example'],
      ['cookie', world.b.cookie],
      ['x-request-id', 'dup'],
      ['content-length', '0'],
    ];
    const extra = dup[d.variant % dup.length]!;
    if (extra[0] === 'content-length' && text !== undefined) {
      // Two different lengths: the server must not answer from a body it misread.
      headers.push(['content-length', String(text.length)], ['content-length', String(Math.max(0, text.length - 1))]);
      contentLength = 'omit';
    } else headers.push(extra);
  }
  const label = `${d.actor}${d.actor === 'bearer' ? `(${d.keyName})` : ''} ${route.method} ${target.length > 160 ? `${target.slice(0, 160)}…` : target} [${d.transport}]`;
  const requestLine = `${route.method} ${target} HTTP/1.1`;
  if (d.transport === 'chunked' && text !== undefined) {
    headers.push(['transfer-encoding', 'chunked']);
    const body = Buffer.concat([Buffer.from(`${text.length.toString(16)}\r\n`), text, Buffer.from('\r\n0\r\n\r\n')]);
    return {
      kind: 'http',
      label,
      bytes: buildRaw({ requestLine, headers, body, contentLength: 'omit' }),
      after: 'wait',
    };
  }
  if (
    (d.transport === 'truncated-end' || d.transport === 'truncated-hold') &&
    text !== undefined &&
    route.method !== 'GET' &&
    route.method !== 'DELETE'
  ) {
    const sent = text.subarray(0, Math.floor(text.length / 2));
    const bytes = buildRaw({ requestLine, headers, body: sent, contentLength: text.length + 1 + (d.variant % 100) });
    return d.transport === 'truncated-end'
      ? { kind: 'truncated-end', label, bytes, after: 'end' }
      : { kind: 'truncated-hold', label, bytes, after: 'hold' };
  }
  return {
    kind: 'http',
    label,
    bytes: buildRaw({
      requestLine,
      headers,
      ...(text !== undefined ? { body: text } : {}),
      ...(contentLength !== undefined ? { contentLength } : {}),
    }),
    after: 'wait',
  };
}
