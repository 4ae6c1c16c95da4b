import t from 'tap';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { routeTableDocument } from '../../src/app.js';

/**
 * The v1 document passes both linters with zero errors and zero warnings: Redocly's recommended rules
 * and Spectral's OpenAPI ruleset, their configurations in sdk/contract/. The document is the route table's, which
 * test/contract/openapi.test.ts proves is byte-for-byte the served one.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

function run(file: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        cwd: root,
        timeout: 120_000,
        maxBuffer: 32 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

t.test('redocly lint and spectral lint (oas): zero errors, zero warnings', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-lint-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(routeTableDocument(), null, 2));

  const [redocly, spectral] = await Promise.all([
    run(bin('redocly'), ['lint', file, '--config', join(root, 'sdk/contract/redocly.yaml'), '--format', 'json']),
    run(bin('spectral'), [
      'lint',
      file,
      '--ruleset',
      join(root, 'sdk/contract/spectral.yaml'),
      '--format',
      'json',
      '--quiet',
      '--fail-severity',
      'hint',
    ]),
  ]);

  const redoclyReport = JSON.parse(redocly.stdout) as {
    totals: { errors: number; warnings: number };
    problems: Array<{ ruleId: string; severity: string; message: string; location?: Array<{ pointer?: string }> }>;
  };
  const redoclyProblems = redoclyReport.problems.map(
    (p) => `${p.severity} ${p.ruleId} ${p.location?.[0]?.pointer ?? ''}: ${p.message}`,
  );
  t.same(redoclyProblems, [], 'redocly: no problems');
  t.match(redoclyReport.totals, { errors: 0, warnings: 0 });

  const spectralProblems = (
    JSON.parse(spectral.stdout === '' ? '[]' : spectral.stdout) as Array<{
      code: string;
      severity: number;
      message: string;
      path: string[];
    }>
  ).map((p) => `${['error', 'warning', 'info', 'hint'][p.severity]} ${p.code} ${p.path.join('.')}: ${p.message}`);
  t.same(spectralProblems, [], 'spectral: no problems of any severity');
  t.equal(spectral.code, 0, `spectral exit code (stderr: ${spectral.stderr.slice(0, 500)})`);
});
