/** Names the load tool's figures go by, shared by the text summary, the HTML report and the runners. */

/**
 * What each latency measures, in its label: the client's figures run from dialing (they include connecting, the
 * greeting and the caller's own speech), the server's turn latency from the end of the caller's speech to the first
 * answer audio. Side by side, the two differ by seconds and both are right.
 */
export const LATENCY_LABELS = {
  mint: 'mint (request round trip)',
  connect: 'connected (from dialing)',
  firstAudio: 'first assistant audio (from dialing)',
  roundTrip: 'round trip (echo)',
  turn: 'server turn (speech end -> answer)',
  provider: 'server: provider part of the turn',
  relay: 'server: relay part of the turn',
} as const;

/** Session ids without a route key (`vs_<random>`) come from a server that is one instance (no INSTANCE_ROUTE_KEY). */
export const NO_ROUTE_KEY = '-';
