/** The carrier's callbacks for one call Parley placed (signed over these URLs, under the base the carrier was given). */
export const CARRIER_CALL_PATH = '/api/v1/telephony/twilio/calls/:callId';

export function carrierPaths(base: string, callId: string) {
  const root = `${base.replace(/\/+$/, '')}${CARRIER_CALL_PATH.replace(':callId', callId)}`;
  return { answer: `${root}/answer`, status: `${root}/status`, machine: `${root}/machine` };
}
