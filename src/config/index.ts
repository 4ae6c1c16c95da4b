import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { envSchema, type Env } from './schema.js';
import { resolveSecretKey } from './secret.js';

/** The parsed, frozen configuration passed down to every module. Nothing else reads process.env. */
export interface Config extends Env {
  /** Signing secret: SECRET_KEY, or the one generated and kept under DATA_DIR. */
  readonly secretKey: string;
  readonly instanceId: string;
  readonly secretKeySource: 'env' | 'generated' | 'file';
  /** SELF_HOSTED as set, or its default: billing not configured and plan limits not enforced. */
  readonly SELF_HOSTED: boolean;
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** The example env file's SECRET_KEY starts with this: refused in production. */
const PLACEHOLDER_SECRET = /^change-me/i;

/** Parses the environment once. Every problem is reported together, so one restart fixes them all. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Readonly<Config> {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const name = issue.path.join('.') || '(environment)';
      const value = source[String(issue.path[0])];
      const shown = value === undefined || /SECRET|TOKEN|KEY|PASSWORD/.test(name) ? '' : ` (got "${value}")`;
      return `${name}: ${issue.message}${issue.message.includes('got') ? '' : shown}`;
    });
    throw new ConfigError(problems);
  }
  const env = parsed.data;
  // deploy/env.example ships a placeholder; a production instance signing with it would accept anyone's tokens.
  if (env.NODE_ENV === 'production' && env.SECRET_KEY !== undefined && PLACEHOLDER_SECRET.test(env.SECRET_KEY)) {
    throw new ConfigError([
      "SECRET_KEY: is the example's placeholder; set a long random value (e.g. `openssl rand -base64 48`)",
    ]);
  }
  if (env.SELF_HOSTED === true && env.HOSTED_USAGE_ENFORCEMENT === 'enforce') {
    throw new ConfigError([
      'SELF_HOSTED: true lifts every plan limit, while HOSTED_USAGE_ENFORCEMENT=enforce applies them; set one of them',
    ]);
  }
  if (env.RECORDINGS_STORE === 's3' && env.S3_BUCKET === undefined) {
    throw new ConfigError(['S3_BUCKET: is required when RECORDINGS_STORE=s3']);
  }
  const selfHosted =
    env.SELF_HOSTED ?? (env.BILLING_ACCESS_TOKEN === undefined && env.HOSTED_USAGE_ENFORCEMENT !== 'enforce');
  const secret = resolveSecretKey(env.SECRET_KEY, env.DATA_DIR);
  const instanceId = env.INSTANCE_ID ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  return Object.freeze({
    ...env,
    SELF_HOSTED: selfHosted,
    secretKey: secret.key,
    secretKeySource: secret.source,
    instanceId,
  });
}

export type { Env } from './schema.js';
