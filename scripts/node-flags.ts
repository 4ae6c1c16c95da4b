/**
 * The Node flags Parley runs with, wherever it is started: `npm start`, deploy/Dockerfile, `npm run cluster` and the
 * bench's Parley (test/house/node-flags.test.ts keeps the first two in step with this list).
 *
 * --max-semi-space-size=64: a young generation of 64 MB semi-spaces instead of V8's 16 MB default. A call's
 * short-lived buffers (base64 strings, provider frames, decoded audio) then die young instead of being promoted and
 * swept by full mark-compacts. Measured in one interleaved run (`npm run bench -- --only=voice --sessions=200,400
 * --relays=uws-relay,parley,parley-semi32,parley-semi64`, native-bench/RESULTS.md): server CPU per session-second
 * -25% (echo, N=200) and -23% (realistic, N=200), relay-added p99 82 -> 15 ms at N=200; RSS +7 to +30 MB.
 */
export const PARLEY_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=64']);
