/** Bare uWS hello: the ceiling for the HTTP scenario. Prints http://127.0.0.1:PORT/ first on stdout. */
import { App, us_socket_local_port } from 'uWebSockets.js';

App()
  .get('/*', (res) => {
    res.end('hello');
  })
  .listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('uws-hello could not listen');
    process.stdout.write(`http://127.0.0.1:${us_socket_local_port(socket as never)}/\n`);
  });
process.once('SIGTERM', () => process.exit(0));
process.once('SIGINT', () => process.exit(0));
