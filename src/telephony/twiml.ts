/**
 * TwiML answers to the carrier's call webhook (the markup Twilio and Telnyx read). Every value is XML-escaped: a
 * caller-controlled string never becomes markup.
 */
export function escapeXml(value: string): string {
  return value.replace(/[<>&'"]/g, (c) =>
    c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : c === "'" ? '&apos;' : '&quot;',
  );
}

const HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

/** A call to a number nobody registered: the carrier rejects it (the caller hears it is not in service). */
export function rejectCall(): string {
  return `${HEAD}<Response><Reject/></Response>`;
}

/** A call that cannot be taken now: a short spoken refusal that names no plan, limit or bill, then hang up. */
export function refuseCall(): string {
  return `${HEAD}<Response><Say>Sorry, we can't take your call right now. Please try again later.</Say><Hangup/></Response>`;
}

/** The call is live: (the recording notice, when recorded), then the carrier's media stream with its parameters. */
export function connectStream(streamUrl: string, parameters: Record<string, string>, notice?: string): string {
  const say = notice === undefined ? '' : `<Say>${escapeXml(notice)}</Say>`;
  const params = Object.entries(parameters)
    .map(([name, value]) => `<Parameter name="${escapeXml(name)}" value="${escapeXml(value)}"/>`)
    .join('');
  return `${HEAD}<Response>${say}<Connect><Stream url="${escapeXml(streamUrl)}">${params}</Stream></Connect></Response>`;
}

/** What a recorded call tells the caller before anything is said (it stands for the consent a widget asks for). */
export const RECORDING_NOTICE = 'This call is recorded.';

/** End the call now (a callee's call the assistant cannot take, or one canceled before it was answered). */
export function hangUpCall(): string {
  return `${HEAD}<Response><Hangup/></Response>`;
}

/** Say this (a voicemail message after the beep), then hang up. */
export function sayThenHangUp(text: string): string {
  return `${HEAD}<Response><Say>${escapeXml(text)}</Say><Hangup/></Response>`;
}

/** A cold transfer: the live call leaves the stream and the carrier dials `to`, showing `callerId`. */
export function dialNumber(to: string, callerId: string): string {
  return `${HEAD}<Response><Dial callerId="${escapeXml(callerId)}"><Number>${escapeXml(to)}</Number></Dial></Response>`;
}
