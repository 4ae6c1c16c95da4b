/**
 * `npm run openapi:fingerprint`: rewrites test/contract/openapi-fingerprint.json from the route table.
 * Run it on purpose when a documented route is added, removed or renamed; the contract test fails until
 * you do (spec, Versioning rule 5). `--check` only compares and exits 1 on a difference.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { routeTableDocument } from './app.js';
import { operationsFingerprint } from './http/index.js';

const FILE = new URL('../test/contract/openapi-fingerprint.json', import.meta.url);

const current = operationsFingerprint(routeTableDocument());
let previous: { sha256?: string; operations?: string[] } = {};
try {
  previous = JSON.parse(readFileSync(FILE, 'utf8')) as typeof previous;
} catch {
  // first run
}
const added = current.operations.filter((op) => !previous.operations?.includes(op));
const removed = (previous.operations ?? []).filter((op) => !current.operations.includes(op));
if (process.argv.includes('--check')) {
  if (previous.sha256 === current.sha256) {
    process.stdout.write(`fingerprint ${current.sha256} matches (${current.operations.length} operations)\n`);
  } else {
    process.stdout.write(`fingerprint differs\n  added: ${added.join(', ') || '-'}\n  removed: ${removed.join(', ') || '-'}\n`);
    process.exitCode = 1;
  }
} else {
  writeFileSync(FILE, JSON.stringify(current, null, 2) + '\n');
  process.stdout.write(`wrote ${current.operations.length} operations, sha256 ${current.sha256}\n  added: ${added.join(', ') || '-'}\n  removed: ${removed.join(', ') || '-'}\n`);
}
