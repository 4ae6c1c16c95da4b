import { carrierSignature, signatureMatches } from '../voice/index.js';
import * as q from './queries.js';
import {
  connectPhoneCall,
  openToken,
  publicBase,
  type ConnectedCall,
  type PhoneCallRequest,
  type TelephonyDeps,
} from './service.js';
import { twilioClient, type CarrierCredentials, type PlaceCall } from './twilio-rest.js';

/** A registered number that places calls: who it is, and the carrier account behind it. */
export interface CallingNumber {
  id: string;
  accountId: string;
  assistantId: string;
  phoneNumber: string;
  provider: 'twilio';
}

/**
 * What the calls capability needs of a carrier to place calls: the account's numbers, the carrier's REST side (with
 * the number's own credentials, opened here and never handed out), the signature check of its callbacks, and the
 * connection of an answered call to an assistant over the media stream, as an inbound call is connected.
 */
export interface OutboundCarrier {
  /** The account's registered number with this value; undefined when it has none. */
  numberOf(accountId: string, phoneNumber: string): Promise<CallingNumber | undefined>;
  /** The base URL the carrier is given (and signs over) for a request with these headers. */
  publicBase(headers: Readonly<Record<string, string>>): string;
  placeCall(numberId: string, call: PlaceCall): Promise<{ callSid: string; status: string }>;
  endCall(numberId: string, callSid: string, status: 'canceled' | 'completed'): Promise<void>;
  redirectCall(numberId: string, callSid: string, twiml: string): Promise<void>;
  /** Whether `signature` is the carrier's over `url` and `params`, signed with the number's token. */
  signedBy(
    numberId: string,
    url: string,
    params: Record<string, string>,
    signature: string | undefined,
  ): Promise<boolean>;
  /** The callee answered: mint the call for `assistantId` on the number's stream and answer the TwiML. */
  connect(numberId: string, assistantId: string, request: PhoneCallRequest): Promise<ConnectedCall | undefined>;
}

export function outboundCarrier(deps: TelephonyDeps): OutboundCarrier {
  const client = twilioClient(deps.config.TWILIO_API_BASE_URL);

  async function credentials(numberId: string): Promise<{ row: q.PhoneNumberRow; creds: CarrierCredentials }> {
    const row = await q.numberById(deps.sql, numberId);
    const token = row === undefined ? undefined : openToken(deps, row);
    if (row === undefined || token === undefined) throw new Error('the calling number is gone');
    return { row, creds: { accountSid: row.carrierAccount, authToken: token } };
  }

  return {
    async numberOf(accountId, phoneNumber) {
      const row = await q.findAccountNumber(deps.sql, accountId, phoneNumber);
      if (row === undefined) return undefined;
      const { id, assistantId, provider } = row;
      return { id, accountId, assistantId, phoneNumber: row.phoneNumber, provider };
    },
    publicBase: (headers) => publicBase(deps.config, headers),
    async placeCall(numberId, call) {
      return client.createCall((await credentials(numberId)).creds, call);
    },
    async endCall(numberId, callSid, status) {
      await client.endCall((await credentials(numberId)).creds, callSid, status);
    },
    async redirectCall(numberId, callSid, twiml) {
      await client.redirectCall((await credentials(numberId)).creds, callSid, twiml);
    },
    async signedBy(numberId, url, params, signature) {
      const row = await q.numberById(deps.sql, numberId);
      const token = row === undefined ? undefined : openToken(deps, row);
      if (token === undefined) return false;
      return signatureMatches(carrierSignature(token, url, params), signature);
    },
    async connect(numberId, assistantId, request) {
      const row = await q.numberById(deps.sql, numberId);
      const token = row === undefined ? undefined : openToken(deps, row);
      if (row === undefined || token === undefined) return undefined;
      return connectPhoneCall(deps, { ...row, assistantId }, token, request);
    },
  };
}
