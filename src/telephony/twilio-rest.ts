/**
 * The carrier's REST side (Twilio's 2010-04-01 Calls resource): place a call, redirect or hang up a live one. Basic
 * auth with the number's AccountSid and auth token; every request is bounded (a carrier that does not answer is a
 * 503, never a hang). The base URL is configuration (TWILIO_API_BASE_URL) so a simulated carrier stands in offline.
 */
export const TWILIO_API_BASE = 'https://api.twilio.com';
const REQUEST_TIMEOUT_MS = 10_000;

export interface CarrierCredentials {
  accountSid: string;
  authToken: string;
}

export interface PlaceCall {
  to: string;
  from: string;
  /** Where the carrier fetches the call's TwiML once the callee answers. */
  answerUrl: string;
  /** Where it POSTs the call's progress (initiated, ringing, answered, completed). */
  statusUrl: string;
  /** Asynchronous answering-machine detection, its verdict POSTed here (the callee is never kept waiting). */
  machineDetectionUrl?: string | undefined;
  timeLimitSeconds?: number | undefined;
}

/** What the carrier said when it refused or could not be reached: the call is `failed` with this. */
export class CarrierRefused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function twilioClient(baseUrl: string | undefined) {
  const base = (baseUrl ?? TWILIO_API_BASE).replace(/\/+$/, '');
  const callsUrl = (sid: string) => `${base}/2010-04-01/Accounts/${encodeURIComponent(sid)}/Calls`;

  async function send(credentials: CarrierCredentials, url: string, form: URLSearchParams): Promise<any> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${credentials.accountSid}:${credentials.authToken}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch {
      throw new CarrierRefused(503, 'The carrier did not answer.');
    }
    const text = await res.text().catch(() => '');
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const message = typeof body?.message === 'string' ? body.message.slice(0, 300) : `HTTP ${res.status}`;
      throw new CarrierRefused(res.status, message);
    }
    return body;
  }

  return {
    /** Asks the carrier to place the call; resolves its call id (CallSid) and status. */
    async createCall(credentials: CarrierCredentials, call: PlaceCall): Promise<{ callSid: string; status: string }> {
      const form = new URLSearchParams({
        To: call.to,
        From: call.from,
        Url: call.answerUrl,
        Method: 'POST',
        StatusCallback: call.statusUrl,
        StatusCallbackMethod: 'POST',
      });
      for (const event of ['initiated', 'ringing', 'answered', 'completed']) form.append('StatusCallbackEvent', event);
      if (call.machineDetectionUrl !== undefined) {
        form.set('MachineDetection', 'DetectMessageEnd');
        form.set('AsyncAmd', 'true');
        form.set('AsyncAmdStatusCallback', call.machineDetectionUrl);
        form.set('AsyncAmdStatusCallbackMethod', 'POST');
      }
      if (call.timeLimitSeconds !== undefined) form.set('TimeLimit', String(call.timeLimitSeconds));
      const body = await send(credentials, `${callsUrl(credentials.accountSid)}.json`, form);
      const callSid = typeof body?.sid === 'string' ? body.sid : '';
      if (!/^CA[0-9a-fA-F]{32}$/.test(callSid)) throw new CarrierRefused(502, 'The carrier answered no call id.');
      return { callSid, status: typeof body.status === 'string' ? body.status : 'queued' };
    },

    /** Ends the call: `canceled` before it was answered, `completed` after. */
    async endCall(credentials: CarrierCredentials, callSid: string, status: 'canceled' | 'completed'): Promise<void> {
      await send(
        credentials,
        `${callsUrl(credentials.accountSid)}/${encodeURIComponent(callSid)}.json`,
        new URLSearchParams({ Status: status }),
      );
    },

    /** Replaces what the live call is doing with this TwiML (the media stream ends; the new verbs run). */
    async redirectCall(credentials: CarrierCredentials, callSid: string, twiml: string): Promise<void> {
      await send(
        credentials,
        `${callsUrl(credentials.accountSid)}/${encodeURIComponent(callSid)}.json`,
        new URLSearchParams({ Twiml: twiml }),
      );
    },
  };
}

export type TwilioClient = ReturnType<typeof twilioClient>;
