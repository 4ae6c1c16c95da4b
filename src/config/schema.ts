import { z } from 'zod';

/** Environment booleans: "true"/"1"/"yes" and "false"/"0"/"no"; anything else is an error, never a silent false. */
const bool = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? fallback : v === 'true' || v === '1' || v === 'yes'));

const int = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v === '') return fallback;
      if (!/^-?\d+$/.test(v.trim())) {
        ctx.addIssue({ code: 'custom', message: `must be a whole number, got "${v}"` });
        return z.NEVER;
      }
      const n = Number(v);
      if (n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be between ${min} and ${max}, got ${n}` });
        return z.NEVER;
      }
      return n;
    });

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const url = (protocols: string[]) =>
  optionalString.refine(
    (v) => {
      if (v === undefined) return true;
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL (${protocols.join(' or ')})` },
  );

const list = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );

/**
 * Every environment variable Parley reads, with its documented default. The README's configuration table
 * mirrors this schema; keep them together.
 */
export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: int(3000, 0, 65535),
  PUBLIC_URL: url(['http:', 'https:']),
  // The carrier's REST API (outbound calls, hang-up, redirect); unset: Twilio's own. Point it at a simulated carrier
  // (npm run phone-sim) to place calls offline.
  TWILIO_API_BASE_URL: url(['http:', 'https:']),
  // How often the call-batch worker looks for contacts due (each pass is a few indexed queries).
  CALL_BATCH_POLL_MS: int(1000, 50, 60_000),
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  DATABASE_POOL_SIZE: int(10, 1, 200),
  REDIS_URL: url(['redis:', 'rediss:']),
  REDIS_KEY_PREFIX: z.string().default('parley:'),
  // Dependency deadlines: a store command or a SQL statement that has not answered by then fails, and the
  // request answers 503 DEPENDENCY_UNAVAILABLE. 0 turns the SQL deadline off.
  REDIS_COMMAND_TIMEOUT_MS: int(1000, 50, 60_000),
  DATABASE_QUERY_TIMEOUT_MS: int(5000, 0, 600_000),
  DATA_DIR: z.string().default('.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // json: one JSON object a line (collectors); pretty: a human line; auto: pretty when stdout is a terminal.
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  SECRET_KEY: optionalString.refine((v) => v === undefined || Buffer.byteLength(v) >= 32, {
    message: 'must be at least 32 bytes',
  }),
  INSTANCE_ID: optionalString,
  // Session-affine routing (deploy/haproxy.cfg): voice session ids carry this instance's key (vs_<key>_<random>), so
  // the proxy sends every request about a session to its owner. Unset: plain vs_<random> (one instance, no proxy).
  INSTANCE_ROUTE_KEY: optionalString.refine((v) => v === undefined || /^[a-z0-9]{1,12}$/.test(v), {
    message: 'must be 1-12 lowercase letters or digits',
  }),
  BODY_LIMIT_BYTES: int(1024 * 1024, 1024, 64 * 1024 * 1024),
  UPLOAD_LIMIT_BYTES: int(20 * 1024 * 1024, 1024, 512 * 1024 * 1024),
  // A body that stops arriving before its Content-Length (no byte for this long) is answered 408 HTTP_BODY_TIMEOUT.
  // Keep it under uWS's own idle timeout (about 10 s), which closes the socket without an answer.
  BODY_READ_TIMEOUT_MS: int(5000, 100, 9000),
  SHUTDOWN_GRACE_MS: int(10_000, 0, 600_000),
  TRUST_PROXY: bool(false),
  // Admission control (src/admission) of chat turns and document writes (ingestion yields to them): running at once,
  // a backstop on waiting per tenant, the longest expected or actual wait (the real bound: from recent service
  // times), and the event-loop delay past which only a quarter of the slots are used. Past them: 503
  // SERVICE_OVERLOADED + Retry-After. Voice mints have a pool of their own (ADMISSION_MINT_*), same rules.
  ADMISSION_MAX_IN_FLIGHT: int(8, 1, 10_000),
  ADMISSION_QUEUE_PER_TENANT: int(1000, 0, 100_000),
  ADMISSION_QUEUE_WAIT_MS: int(2000, 0, 60_000),
  ADMISSION_LOOP_DELAY_MS: int(100, 1, 10_000),
  ADMISSION_MINT_MAX_IN_FLIGHT: int(16, 1, 10_000),
  ADMISSION_MINT_QUEUE_PER_TENANT: int(200, 0, 100_000),
  ADMISSION_MINT_QUEUE_WAIT_MS: int(3000, 0, 60_000),

  // Identity
  SIGNUP_ENABLED: bool(false),
  SESSION_TTL_HOURS: int(24 * 14, 1, 24 * 365),
  ADMIN_USER_IDS: list,
  API_RATE_LIMIT_PER_MINUTE: int(60, 1, 1_000_000),

  // Widget
  WIDGET_RATE_LIMIT_PER_VISITOR_PER_MINUTE: int(20, 1, 1_000_000),
  WIDGET_RATE_LIMIT_PER_ASSISTANT_PER_MINUTE: int(120, 1, 1_000_000),
  WIDGET_SIGNING_MAX_SKEW_SECONDS: int(300, 1, 86_400),

  // Chat provider
  CHAT_PROVIDER: z.enum(['local', 'openai']).default('local'),
  OPENAI_BASE_URL: url(['http:', 'https:']),
  OPENAI_API_KEY: optionalString,
  OPENAI_MODEL: z.string().default('gpt-4o-mini'),
  OPENAI_TIMEOUT_MS: int(60_000, 100, 600_000),

  // Voice provider
  // auto: `local` when its engines are installed, else the simulator (always the simulator under NODE_ENV=test).
  VOICE_PROVIDER: z.enum(['auto', 'local', 'simulator', 'gpt-live']).default('auto'),
  // Directories searched for the local voice engines (pocketsphinx_continuous, espeak-ng).
  VOICE_LOCAL_ENGINES_PATH: z.string().default('/usr/local/bin:/usr/bin:/bin'),
  VOICE_PROVIDER_URL: url(['ws:', 'wss:']),
  VOICE_PROVIDER_API_KEY: optionalString,
  VOICE_MODEL: z.string().default('gpt-live-1'),
  // The longest a caller frame waits to share a provider append. A frame goes to the provider at once when nothing is
  // in flight on that link; only while its previous write has not drained are frames gathered into one append, which
  // leaves when the link drains or at this cap. 0: one append per caller frame, never held. (It was a fixed window
  // before; a larger value now only lets a backed-up link gather longer.) The wait is in /metrics
  // (parley_voice_relay_append_wait_seconds, 0 for frames sent at once).
  VOICE_PROVIDER_APPEND_MS: int(10, 0, 1000),
  VOICE_MAX_CONCURRENT_SESSIONS: int(0, 0, 1_000_000),
  // Voice sessions: heartbeat interval given to clients that declare `heartbeat`; the deployment's cap on an
  // assistant's maxDurationSeconds.
  VOICE_HEARTBEAT_INTERVAL_MS: int(5000, 1000, 40_000),
  VOICE_MAX_DURATION_CAP_SECONDS: int(3600, 30, 4 * 3600),
  // A minted session whose media socket never connects ends `disconnected` after this long, billed nothing.
  VOICE_JOIN_TIMEOUT_SECONDS: int(15, 1, 600),
  // SIGTERM: live calls may go on this long (no new mints, readiness 503) before the rest end with `shutdown`.
  VOICE_DRAIN_TIMEOUT_SECONDS: int(300, 0, 86_400),
  // Ownership records: renewed every third of this, expired after it; a dead owner's calls end `control_lost` once
  // their record expired and a survivor's orphan sweep (every VOICE_ORPHAN_SWEEP_SECONDS) or a request finds them.
  VOICE_OWNERSHIP_TTL_SECONDS: int(15, 3, 600),
  VOICE_ORPHAN_SWEEP_SECONDS: int(30, 1, 3600),

  // Call recordings: where finished recordings are kept (disk: DATA_DIR/recordings; s3: an S3-compatible bucket, the
  // local WAV deleted once uploaded), and the longest a signed recording link may live (docs/recordings.md).
  RECORDINGS_STORE: z.enum(['disk', 's3']).default('disk'),
  RECORDING_URL_TTL_SECONDS: int(86_400, 60, 7 * 86_400),
  S3_ENDPOINT: url(['http:', 'https:']),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: optionalString,
  S3_PREFIX: z.string().default('recordings/'),
  S3_FORCE_PATH_STYLE: bool(false),
  AWS_ACCESS_KEY_ID: optionalString,
  AWS_SECRET_ACCESS_KEY: optionalString,
  AWS_SESSION_TOKEN: optionalString,

  // Metrics (Prometheus text at GET /metrics): off unless a bearer token is set, or served on a port of its own.
  METRICS_TOKEN: optionalString.refine((v) => v === undefined || Buffer.byteLength(v) >= 16, {
    message: 'must be at least 16 bytes',
  }),
  METRICS_PORT: int(0, 0, 65535),
  // One access-log line per request (route pattern, status, duration, request id); 1 = every request, 0 = none.
  ACCESS_LOG_SAMPLE_RATE: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return 1;
      const n = Number(v);
      if (!Number.isFinite(n) || n < 0 || n > 1) {
        ctx.addIssue({ code: 'custom', message: `must be a number from 0 to 1, got "${v}"` });
        return z.NEVER;
      }
      return n;
    }),

  // Usage metering (docs/design-decisions.md, Usage and plans)
  HOSTED_USAGE_ENFORCEMENT: z.enum(['shadow', 'enforce', 'off']).default('shadow'),
  HOSTED_USAGE_DEFAULT_LIMIT_MICROS: int(1_000_000, 0),
  HOSTED_USAGE_MAX_OUTPUT_TOKENS: int(4096, 1, 1_000_000),
  HOSTED_USAGE_RECONCILE_STALE_MINUTES: int(15, 1, 10_080),
  HOSTED_USAGE_EXEMPT_PLAYGROUND: bool(false),
  VOICE_QUOTA_EXEMPT_PLAYGROUND: bool(true),

  // Billing (Polar)
  BILLING_ACCESS_TOKEN: optionalString,
  BILLING_WEBHOOK_SECRET: optionalString,
  BILLING_SERVER: z.enum(['production', 'sandbox']).default('sandbox'),
  BILLING_API_BASE_URL: url(['http:', 'https:']),
  BILLING_PRODUCT_ID_STARTER: optionalString,
  BILLING_PRODUCT_ID_PRO: optionalString,
  BILLING_PRODUCT_ID_BUSINESS: optionalString,
  // Self-hosted: no plan limits at all (assistants, requests, evals, voice minutes and calls, the plan budget); usage
  // is still recorded and priced. Unset: true when billing is not configured (no BILLING_ACCESS_TOKEN) and
  // HOSTED_USAGE_ENFORCEMENT is not `enforce`. The first owner the CLI creates on a self-hosted server is its operator.
  SELF_HOSTED: z
    .enum(['true', 'false', '1', '0', 'yes', 'no'], { error: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1' || v === 'yes')),

  // Webhooks: let endpoints on loopback, private and link-local addresses receive events (local development only).
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool(false),
});

export type Env = z.output<typeof envSchema>;
