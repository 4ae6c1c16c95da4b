import { customAlphabet } from 'nanoid';

/**
 * Voice session ids. With a route key (INSTANCE_ROUTE_KEY) the id names its owner, `vs_<key>_<random>`, so a stock
 * proxy can send every request about the session (heartbeat, gate, end, the media socket) to the instance that
 * runs it (deploy/haproxy.cfg). Without one it is `vs_<random>` (one instance, no proxy to steer).
 */
export const SESSION_ID_PATTERN = /^vs_(?:[a-z0-9]{1,12}_)?[0-9A-Za-z]{1,64}$/;

const body = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 24);

export function newSessionId(routeKey: string | undefined): string {
  return routeKey === undefined ? `vs_${body()}` : `vs_${routeKey}_${body()}`;
}

/** The owner's route key a session id carries, if any. */
export function routeKeyOf(sessionId: string): string | undefined {
  return /^vs_([a-z0-9]{1,12})_/.exec(sessionId)?.[1];
}
