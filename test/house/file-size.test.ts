import { readFileSync } from 'node:fs';
import t from 'tap';
import { listFiles } from './import-graph.js';

// docs/house-rules.md rule 13: one concept per file; split before 400 lines. It covers every tree of source code:
// the server, the SDK and the browser apps. Generated files are listed with the command that writes them.
const MAX_LINES = 400;
const TREES = ['src', 'sdk/src', 'web/widget/src', 'web/dashboard/src'];
const ALLOWED: Record<string, string> = {
  'sdk/src/generated/openapi.ts': 'generated from the OpenAPI document by npm run sdk:generate',
  'web/dashboard/src/api/generated/dashboard-routes.ts': 'generated from the route table by npm run dashboard:generate',
};

function lineCount(text: string): number {
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

for (const tree of TREES) {
  t.test(`no file under ${tree}/ passes ${MAX_LINES} lines`, async (t) => {
    const files = listFiles(tree).map((p) => p.split('\\').join('/'));
    t.ok(
      files.some((f) => /\.tsx?$/.test(f)),
      'read the tree',
    );
    const offenders = files
      .map((file) => ({ file, lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter(({ file, lines }) => lines > MAX_LINES && ALLOWED[file] === undefined)
      .map(({ file, lines }) => `${file}: ${lines} lines`);
    t.same(offenders, [], `files over ${MAX_LINES} lines (split them by concern)`);
  });
}

t.test('the count and the exceptions are right', async (t) => {
  t.equal(lineCount('a\nb\n'), 2, 'a trailing newline ends the last line, not a new one');
  for (const [file, why] of Object.entries(ALLOWED)) {
    t.ok(lineCount(readFileSync(file, 'utf8')) > MAX_LINES, `${file} still needs its exception (${why})`);
  }
});
