/**
 * The HAProxy configuration for Parley behind one proxy, rendered from the list of instances, so `npm run cluster`,
 * the cluster test and deploy/haproxy.cfg (compose) share one text.
 *
 * Routing: one backend (`parley`) for mints and for every request about a voice session
 * (`/api/v1/voice/sessions/vs_<key>_.../{heartbeat,gate,end,stream}`), so least connections counts each instance's live
 * calls (their media sockets and gate streams) and a new call goes to the ready instance with the fewest. A session's
 * requests go to the instance whose INSTANCE_ROUTE_KEY is <key> while it is alive, ready or not (`/readyz` 503 while
 * it drains puts it in NOLB: no new calls, its own calls still reach it); a dead owner is DOWN, and its calls' requests
 * land on a survivor, which answers `lost` for them. When no instance is ready, other requests go to any live one.
 */
export interface ProxyInstance {
  /** INSTANCE_ROUTE_KEY of the instance, also the HAProxy server name. */
  routeKey: string;
  /** host:port the proxy connects to. */
  address: string;
  /**
   * A spare slot: declared (with its routing rule) but in maintenance, so a replacement can take it at run time
   * through the admin socket (`set server ... addr`, `state ready`) without reloading the proxy. See cluster.ts.
   */
  spare?: boolean;
}

export interface ProxyConfigOptions {
  /** `bind` argument, e.g. `127.0.0.1:8080` or `:8080`. */
  bind: string;
  instances: ProxyInstance[];
  /** Health check interval (ms); an instance is down after 2 failed checks, up after 2 good ones. */
  checkIntervalMs?: number;
  /** A stats page (CSV at `<uri>;csv`) on this bind, for people and tests. */
  stats?: { bind: string; uri: string };
  /** Container deployments: resolve server names through Docker's DNS and start even if an instance is not up yet. */
  dockerDns?: boolean;
  /**
   * The proxy's connection limit (default 8000). Each live call holds two client connections (media socket and gate
   * stream) and two to its instance: at the default about 4,000 calls fit (deploy/RUNBOOK.md, sizing).
   */
  maxConnections?: number;
  /** A Unix socket for HAProxy's runtime API (admin level): how the local cluster swaps instances in and out. */
  adminSocket?: string;
}

const ROUTE_KEY = /^[a-z0-9]{1,12}$/;

export function renderHaproxyConfig(options: ProxyConfigOptions): string {
  const inter = options.checkIntervalMs ?? 2000;
  for (const i of options.instances) {
    if (!ROUTE_KEY.test(i.routeKey))
      throw new Error(`route key "${i.routeKey}" must be 1-12 lowercase letters or digits`);
  }
  if (new Set(options.instances.map((i) => i.routeKey)).size !== options.instances.length)
    throw new Error('route keys must be unique');
  const serverOptions = options.dockerDns ? ' resolvers docker init-addr last,libc,none' : '';
  const servers = options.instances.map(
    (i) => `  server ${i.routeKey} ${i.address} check${serverOptions}${i.spare ? ' disabled' : ''}`,
  );
  const lines = [
    '# Parley behind HAProxy (rendered by scripts/cluster/haproxy-config.ts; see deploy/README.md).',
    'global',
    `  maxconn ${options.maxConnections ?? 8000}`,
    ...(options.adminSocket ? [`  stats socket ${options.adminSocket} mode 600 level admin`] : []),
    '',
    ...(options.dockerDns ? ['resolvers docker', '  nameserver dns 127.0.0.11:53', '  hold valid 5s', ''] : []),
    'defaults',
    '  mode http',
    '  option forwardfor',
    '  timeout connect 2s',
    '  timeout client 65s',
    '  timeout server 65s',
    '  # Media WebSockets: idle-timed by the relay and the instance, not here.',
    '  timeout tunnel 2h',
    '  timeout http-request 10s',
    '  timeout queue 5s',
    '  # A busy instance (a burst of mints) answers its checks late but is alive: only a check that takes this long',
    '  # counts as failed (a dead one refuses the connection at once).',
    '  timeout check 3s',
    '  # A connection an instance refused (it died) is retried on another one: never a request it had started.',
    '  retries 2',
    '  option redispatch 1',
    "  # The proxy's own refusals (no instance could take the request) answer like Parley's: JSON with a code, and",
    '  # Retry-After where trying again soon can succeed.',
    `  http-error status 503 content-type application/json string '{"error":"No instance can take the request right now.","code":"PROXY_NO_INSTANCE"}' hdr retry-after 1`,
    `  http-error status 502 content-type application/json string '{"error":"The instance did not answer properly.","code":"PROXY_BAD_GATEWAY"}'`,
    `  http-error status 504 content-type application/json string '{"error":"The instance did not answer in time.","code":"PROXY_TIMEOUT"}'`,
    '',
    'frontend parley',
    `  bind ${options.bind}`,
    "  # Requests about one voice session carry its owner's route key: vs_<key>_<random>.",
    '  acl voice_session path_reg ^/api/v1/voice/sessions/vs_[a-z0-9]{1,12}_[0-9A-Za-z]+(/|$)',
    '  # No instance ready (e.g. Redis down everywhere): the live ones still answer, with a clear 503 where they must.',
    '  use_backend parley_alive if !voice_session { nbsrv(parley) eq 0 }',
    '  default_backend parley',
    '',
    '# One backend for mints and for every request about a live call (its media socket and gate stream stay open as',
    "# long as the call): least connections therefore counts each instance's live calls, and a new call goes to the",
    '# ready instance with the fewest.',
    'backend parley',
    '  balance leastconn',
    '  option httpchk',
    '  # Ready (200): takes new calls. Alive but not ready (503: draining, or a dependency does not answer): NOLB, no',
    '  # new calls, yet the requests of its live calls still reach it. No answer: DOWN, and those requests go to a',
    "  # survivor, which answers for the dead owner's calls.",
    '  http-check send meth GET uri /readyz ver HTTP/1.1 hdr host parley',
    '  http-check expect status 200 error-status L7OKC',
    '  # A mint refused by an instance that began draining before its check saw it (503, nothing started) is tried',
    '  # once more elsewhere; no other request is ever replayed.',
    '  retry-on conn-failure empty-response 503',
    '  http-request disable-l7-retry unless { method POST } { path /api/v1/voice/sessions }',
    ...options.instances.map(
      (i) => `  use-server ${i.routeKey} if { path_beg /api/v1/voice/sessions/vs_${i.routeKey}_ }`,
    ),
    '  # A refused connection marks the instance down at once (it died), not only after two failed checks.',
    `  default-server inter ${inter} fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down`,
    ...servers,
    '',
    '# Only while no instance is ready: requests that are not about a live call go to any instance that is alive.',
    'backend parley_alive',
    '  balance leastconn',
    '  option httpchk',
    '  http-check send meth GET uri /healthz ver HTTP/1.1 hdr host parley',
    '  http-check expect status 200',
    `  default-server inter ${inter} fall 2 rise 2`,
    ...servers,
  ];
  if (options.stats) {
    lines.push(
      '',
      'listen stats',
      `  bind ${options.stats.bind}`,
      '  stats enable',
      `  stats uri ${options.stats.uri}`,
      '  stats refresh 5s',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The configuration shipped in deploy/haproxy.cfg for deploy/compose.yaml (two instances, keys a and b). */
export function composeHaproxyConfig(): string {
  return renderHaproxyConfig({
    bind: ':8080',
    instances: [
      { routeKey: 'a', address: 'parley-a:3000' },
      { routeKey: 'b', address: 'parley-b:3000' },
    ],
    dockerDns: true,
  });
}
