/**
 * The SDK's generated files, from the server's route table (no database or running server needed):
 *
 *   npm run sdk:generate          rewrites sdk/src/generated/openapi.ts (the contract types); run after any route or
 *                                 schema change. test/contract/openapi.test.ts fails while it is stale.
 *   npm run openapi:fingerprint   rewrites sdk/contract/operations.json. Run it ON PURPOSE when a documented operation
 * is added, removed or renamed (docs/api.md, Versioning and deprecation); `-- --check` only compares.
 *
 * It lives with the contract tests because it is the one place allowed to import both src/ and sdk/
 * (docs/house-rules.md rule 11).
 */
import { writeFileSync } from 'node:fs';
import { routeTableDocument } from '../../src/app.js';
import {
  compareFingerprint,
  FINGERPRINT_FILE,
  generateTypes,
  GENERATED_TYPES_FILE,
  operationsFingerprint,
  readCommittedFingerprint,
  type OperationsFingerprint,
} from '../../sdk/contract/tooling.js';

const [command = 'types'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const document = routeTableDocument();

if (command === 'types') {
  writeFileSync(GENERATED_TYPES_FILE, await generateTypes(document));
  process.stdout.write(`wrote ${GENERATED_TYPES_FILE.pathname}\n`);
} else if (command === 'fingerprint') {
  const current = operationsFingerprint(document);
  let previous: OperationsFingerprint = { operations: [], sha256: '' };
  try {
    previous = readCommittedFingerprint();
  } catch {
    // first run
  }
  const diff = compareFingerprint(previous, current);
  const changes = `  added: ${diff.added.join(', ') || '-'}\n  removed: ${diff.removed.join(', ') || '-'}\n`;
  if (process.argv.includes('--check')) {
    process.stdout.write(
      diff.ok
        ? `fingerprint ${current.sha256} matches (${current.operations.length} operations)\n`
        : `fingerprint differs\n${changes}`,
    );
    if (!diff.ok) process.exitCode = 1;
  } else {
    writeFileSync(FINGERPRINT_FILE, JSON.stringify(current, null, 2) + '\n');
    process.stdout.write(`wrote ${current.operations.length} operations, sha256 ${current.sha256}\n${changes}`);
  }
} else {
  process.stderr.write(`unknown command ${command}: use types or fingerprint\n`);
  process.exitCode = 2;
}
