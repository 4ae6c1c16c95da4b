/** node:http hello: the usual-way baseline for the HTTP scenario. Prints http://127.0.0.1:PORT/ first on stdout. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((_req, res) => {
  res.end('hello');
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}/\n`);
});
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
