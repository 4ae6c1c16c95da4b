/**
 * The floor for Parley's authenticated GET: bare uWS + postgres.js running the same single SELECT by id
 * (`select <the assistant columns> from assistants where id = $1`, a prepared statement, pool of 10 like Parley's
 * default), no auth, no limiter, no validation. GET /assistants/:id answers {"assistant": row} as JSON.
 * Env: BENCH_FLOOR_DATABASE_URL (loopback). Prints http://127.0.0.1:PORT/ first on stdout.
 */
import postgres from 'postgres';
import { App, us_socket_local_port } from 'uWebSockets.js';

const url = process.env.BENCH_FLOOR_DATABASE_URL;
if (!url) throw new Error('BENCH_FLOOR_DATABASE_URL is required');
const sql = postgres(url, { max: 10, transform: postgres.camel, onnotice: () => undefined });
const COLUMNS =
  'id, public_id, account_id, name, description, welcome_message, instructions, language, settings, created_at, updated_at';

App()
  .get('/assistants/:id', (res, req) => {
    const id = req.getParameter(0) ?? ''; // copied before the handler returns (docs/house-rules.md rule 14)
    let aborted = false;
    res.onAborted(() => (aborted = true)); // before any await (rule 15)
    sql`select ${sql.unsafe(COLUMNS)} from assistants where id = ${id}`.then(
      (rows) => {
        if (aborted) return;
        res.cork(() => {
          // rule 16: corked after the await
          if (rows.length === 0) res.writeStatus('404 Not Found').end();
          else
            res
              .writeHeader('content-type', 'application/json; charset=utf-8')
              .end(JSON.stringify({ assistant: rows[0] }));
        });
      },
      () => {
        if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').end());
      },
    );
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('uws-pg-floor could not listen');
    process.stdout.write(`http://127.0.0.1:${us_socket_local_port(socket as never)}/\n`);
  });
const stop = () => void sql.end({ timeout: 1 }).finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
