/**
 * `phone-sim carrier`: runs the simulated carrier's REST side ({@link SimulatedCarrier}) until Ctrl-C, so calls Parley
 * places (POST /api/v1/calls, call batches) run offline: set Parley's TWILIO_API_BASE_URL to the URL it prints. Each
 * call that ends is a line on stderr; on exit the calls are printed as JSON on stdout.
 */
import { parseArgs } from 'node:util';
import { SimulatedCarrier, type Callee } from './carrier-rest.js';

export const CARRIER_USAGE = `phone-sim carrier: a simulated carrier (Twilio's REST Calls API) for calls Parley places.

  npm run phone-sim -- carrier --account-sid AC... --auth-token ... [--port 4010] \\
    [--callee +15550100123=machine] [--callee +15550100124=busy]

  --account-sid SID     the carrier account of the registered number (required)
  --auth-token TOKEN    its auth token: checks Parley's requests, signs the callbacks (or PHONE_SIM_AUTH_TOKEN)
  --port N              where to listen on 127.0.0.1 (default 0: any free port)
  --callee E164=KIND    who answers that number: person (default), machine, busy, no-answer, invalid
Set Parley's TWILIO_API_BASE_URL to the printed URL. A person speaks, listens and hangs up; a machine plays a
greeting and a beep and records what is said after it.`;

const KINDS = ['person', 'machine', 'busy', 'no-answer', 'invalid'] as const;

export async function runCarrierCommand(
  argv: string[],
  env: Record<string, string | undefined>,
  out: { stdout: (s: string) => Promise<void> | void; stderr: (s: string) => void },
  stop: AbortSignal,
): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      options: {
        'account-sid': { type: 'string' },
        'auth-token': { type: 'string' },
        port: { type: 'string' },
        callee: { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (err) {
    out.stderr(`${(err as Error).message}\n\n${CARRIER_USAGE}\n`);
    return 1;
  }
  if (values.help) {
    out.stdout(`${CARRIER_USAGE}\n`);
    return 0;
  }
  const sid = values['account-sid'];
  const token = values['auth-token'] ?? env['PHONE_SIM_AUTH_TOKEN'];
  const port = Number(values.port ?? '0');
  const callees = new Map<string, Callee>();
  for (const spec of values.callee ?? []) {
    const [number, kind] = spec.split('=');
    if (number === undefined || !KINDS.includes(kind as (typeof KINDS)[number])) {
      out.stderr(`--callee ${spec}: expected E164=${KINDS.join('|')}\n`);
      return 1;
    }
    callees.set(number, { kind: kind as (typeof KINDS)[number] } as Callee);
  }
  if (sid === undefined || !/^AC[0-9a-fA-F]{32}$/.test(sid) || token === undefined || token === '') {
    out.stderr(`--account-sid (AC + 32 hex digits) and --auth-token are required\n\n${CARRIER_USAGE}\n`);
    return 1;
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    out.stderr('--port must be 0 to 65535\n');
    return 1;
  }
  const carrier = await SimulatedCarrier.start({
    accounts: { [sid]: token },
    callee: (to) => callees.get(to) ?? { kind: 'person' },
    port,
    onEnded: (call) =>
      out.stderr(
        `${call.sid} ${call.to} ${call.callee}: ${call.statuses.join(' > ')}` +
          `${call.voicemail !== undefined ? ` (voicemail: ${call.voicemail.length} characters)` : ''}\n`,
      ),
  });
  out.stderr(`simulated carrier at ${carrier.url}: set TWILIO_API_BASE_URL to it\n`);
  await new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
  await carrier.close();
  await out.stdout(
    `${JSON.stringify({ calls: [...carrier.calls.values()].map(({ done: _done, ...call }) => call) })}\n`,
  );
  return 0;
}
