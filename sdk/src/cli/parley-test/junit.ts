/** JUnit XML of a scenario run: one test suite, one test case per scenario, a failure per failed verdict. */

export interface JunitCase {
  name: string;
  transport: string;
  status: 'pending' | 'running' | 'passed' | 'failed' | 'error';
  durationMs: number;
  verdicts: Array<{ passed: boolean; evidence: string; expectation: unknown }>;
  error: string | null;
}

function escapeXml(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(/"/g, '&quot;')
      .replace(/'/g, '&apos;')
      // Characters XML 1.0 cannot carry at all.
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, '')
  );
}

export function junitXml(suite: { name: string; durationMs: number; cases: JunitCase[] }): string {
  const failures = suite.cases.filter((c) => c.status === 'failed').length;
  const errors = suite.cases.filter((c) => c.status !== 'passed' && c.status !== 'failed').length;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="parley-test" tests="${suite.cases.length}" failures="${failures}" errors="${errors}" time="${(suite.durationMs / 1000).toFixed(3)}">`,
    `  <testsuite name="${escapeXml(suite.name)}" tests="${suite.cases.length}" failures="${failures}" errors="${errors}" time="${(suite.durationMs / 1000).toFixed(3)}">`,
  ];
  for (const c of suite.cases) {
    lines.push(
      `    <testcase classname="${escapeXml(`${suite.name}.${c.transport}`)}" name="${escapeXml(c.name)}" time="${(c.durationMs / 1000).toFixed(3)}">`,
    );
    if (c.status === 'failed') {
      const failed = c.verdicts.filter((v) => !v.passed);
      const message = failed.map((v) => JSON.stringify(v.expectation)).join('; ');
      const body = failed.map((v) => `${JSON.stringify(v.expectation)}: ${v.evidence}`).join('\n');
      lines.push(`      <failure message="${escapeXml(message)}" type="expectation">${escapeXml(body)}</failure>`);
    } else if (c.status !== 'passed') {
      const message = c.error ?? `the scenario did not finish (${c.status})`;
      lines.push(`      <error message="${escapeXml(message)}" type="${escapeXml(c.status)}"></error>`);
    }
    lines.push('    </testcase>');
  }
  lines.push('  </testsuite>', '</testsuites>', '');
  return lines.join('\n');
}
