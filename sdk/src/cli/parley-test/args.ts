/** parley-test's command line. */

export interface ParleyTestOptions {
  url: string;
  apiKey: string;
  assistantId: string;
  scenarios: string[];
  junitPath: string | undefined;
  concurrency: number;
  timeoutMs: number;
  json: boolean;
}

export const PARLEY_TEST_USAGE = `Usage: parley-test --url <server> --assistant <id> [--scenario <name or id>]... [--junit out.xml]
                   [--concurrency 3] [--timeout 600s] [--json]

Runs an assistant's test scenarios on a Parley server, prints each verdict with its evidence, writes JUnit XML
and exits 1 when any scenario failed (0 when all passed; 2 on a usage or connection error).
The API key is read from PARLEY_API_KEY (scopes assistants:read and assistants:write).`;

function duration(value: string): number {
  const m = /^(\d+)(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new Error(`not a duration: ${value}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

export function parseParleyTestArgs(
  argv: string[],
  env: Record<string, string | undefined>,
): ParleyTestOptions | 'help' {
  const o: Partial<ParleyTestOptions> & { scenarios: string[] } = {
    scenarios: [],
    concurrency: 3,
    timeoutMs: 600_000,
    json: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined || v.startsWith('--')) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === '--help' || arg === '-h') return 'help';
    else if (arg === '--url') o.url = value().replace(/\/+$/, '');
    else if (arg === '--assistant') o.assistantId = value();
    else if (arg === '--scenario') o.scenarios.push(value());
    else if (arg === '--junit') o.junitPath = value();
    else if (arg === '--concurrency') {
      o.concurrency = Number(value());
      if (!Number.isInteger(o.concurrency) || o.concurrency < 1 || o.concurrency > 10)
        throw new Error('--concurrency is 1 to 10');
    } else if (arg === '--timeout') o.timeoutMs = duration(value());
    else if (arg === '--json') o.json = true;
    else throw new Error(`unknown argument: ${arg}`);
  }
  if (o.url === undefined) throw new Error('--url is required');
  if (!/^https?:\/\//.test(o.url)) throw new Error('--url must start with http:// or https://');
  if (o.assistantId === undefined) throw new Error('--assistant is required');
  const apiKey = env['PARLEY_API_KEY'];
  if (apiKey === undefined || apiKey === '') throw new Error('PARLEY_API_KEY is not set');
  return {
    url: o.url,
    apiKey,
    assistantId: o.assistantId,
    scenarios: o.scenarios,
    junitPath: o.junitPath,
    concurrency: o.concurrency!,
    timeoutMs: o.timeoutMs!,
    json: o.json!,
  };
}
