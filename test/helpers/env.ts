/**
 * The only place tests read process.env. Both services run on the test machine (and in CI) with these
 * defaults; override to point the suite elsewhere.
 */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
