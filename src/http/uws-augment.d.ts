/**
 * uws-pack declares its compression constants and LIBUS_LISTEN_EXCLUSIVE_PORT as types only, and
 * `ListenOptions` as an enum that does not exist at runtime. These are the values it really exports.
 */
declare module 'uWebSockets.js' {
  export const DISABLED: number;
  export const SHARED_COMPRESSOR: number;
  export const SHARED_DECOMPRESSOR: number;
  export const LIBUS_LISTEN_EXCLUSIVE_PORT: number;
}
export {};
