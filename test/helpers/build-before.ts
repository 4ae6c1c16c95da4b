/**
 * Run by tap once before the test files (`before` in .taprc): the server transpiled into dist/ as `npm start` runs
 * it, so the tests that start Parley or its CLI as processes of their own start the built modules (a third of the
 * CPU of loading src through tsx each time). The test files learn of it from PARLEY_TEST_BUILT (test-env in .taprc);
 * a test file run on its own, outside tap, starts src through tsx as before.
 */
import { buildServer } from '../../scripts/build-server.js';

const started = performance.now();
const modules = await buildServer();
console.log(`# built the server for the tests: ${modules} modules in ${Math.round(performance.now() - started)} ms`);
