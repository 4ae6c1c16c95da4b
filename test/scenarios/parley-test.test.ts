import t from 'tap';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestApp } from '../helpers/app.js';
import { createOwner } from '../helpers/identity.js';
import { addReadyTextDocument } from '../providers/voice/local-helpers.js';
import { runScript } from '../sdk/helpers.js';
import { api, DOCUMENT } from './helpers.js';
import { parseXml } from './xml.js';

/** parley-test as a CI job runs it (a child process with the key in PARLEY_API_KEY) against a loopback Parley. */
const CLI = fileURLToPath(new URL('../../sdk/src/cli/parley-test/main.ts', import.meta.url));

t.test('parley-test exits 0 when the price is said, 1 when it must not be, and writes valid JUnit XML', async (t) => {
  const app = await startTestApp(t, { env: { CHAT_PROVIDER: 'local' } });
  const owner = await createOwner(app.database.sql);
  const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Notes' });
  const assistantId: string = made.body.assistant.publicId;
  t.equal(await addReadyTextDocument(app.url, owner.secret, assistantId, 'Plans', DOCUMENT), 201);
  const base = `/api/v1/assistants/${assistantId}/scenarios`;
  const ask = { transport: 'chat', turns: [{ say: 'How much does the premium plan cost?' }] };
  t.equal(
    (await api(app.url, 'POST', base, owner.secret, { ...ask, name: 'price', expect: [{ mustSay: '/4\\.99 euros/' }] }))
      .status,
    201,
  );
  t.equal(
    (
      await api(app.url, 'POST', base, owner.secret, {
        ...ask,
        name: 'no <price> & "quotes"',
        expect: [{ neverSay: '4.99 euros' }],
      })
    ).status,
    201,
  );

  const dir = mkdtempSync(join(tmpdir(), 'parley-test-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const run = (args: string[], key = owner.secret) =>
    runScript(CLI, ['--url', app.url, '--assistant', assistantId, ...args], { env: { PARLEY_API_KEY: key } });
  const parse = (file: string) => {
    const xml = readFileSync(file, 'utf8');
    t.doesNotThrow(() => parseXml(xml), 'well-formed XML');
    return parseXml(xml);
  };

  const pass = await run(['--scenario', 'price', '--junit', join(dir, 'pass.xml')]);
  t.equal(pass.code, 0, pass.stdout + pass.stderr);
  t.match(pass.stdout, /PASS {2}price \(chat/);
  t.match(pass.stdout, /1 of 1 scenarios passed/);
  const passed = parse(join(dir, 'pass.xml'));
  t.match(passed, { name: 'testsuites', attrs: { tests: '1', failures: '0', errors: '0' } });
  const [passSuite] = passed.children;
  t.match(passSuite, { name: 'testsuite', children: [{ name: 'testcase', attrs: { name: 'price' }, children: [] }] });

  const all = await run(['--junit', join(dir, 'all.xml')]);
  t.equal(all.code, 1, 'a failed scenario fails the build');
  t.match(all.stdout, /FAIL {2}no <price> & "quotes" \(chat/);
  t.match(all.stdout, /FAIL {2}\{"neverSay":"4\.99 euros"\}: said "4\.99 euros" in: ".*premium plan costs 4\.99 euros/);
  t.match(all.stdout, /1 of 2 scenarios passed/);
  const failed = parse(join(dir, 'all.xml'));
  t.match(failed.attrs, { tests: '2', failures: '1', errors: '0' });
  const cases = failed.children[0]!.children;
  t.same(
    cases.map((c) => c.attrs.name),
    ['price', 'no <price> & "quotes"'],
    'names escaped and read back',
  );
  t.match(cases[1]!.children[0], { name: 'failure', attrs: { type: 'expectation' }, text: /said "4\.99 euros"/ });
  t.throws(() => parseXml('<a><b></a>'), 'the reader does refuse broken XML');

  const usage = await run(['--scenario', 'price'], '');
  t.equal(usage.code, 2, 'no key: a usage error');
  t.match(usage.stderr, /PARLEY_API_KEY is not set/);
  const unknown = await run(['--scenario', 'nope']);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /SCENARIO_UNKNOWN|no scenario of that id or name/);
});

t.test(
  'in CI: the same parley-test run passes, then fails the build once a document change gives a wrong price',
  async (t) => {
    const app = await startTestApp(t, { env: { CHAT_PROVIDER: 'local' } });
    const owner = await createOwner(app.database.sql);
    const made = await api(app.url, 'POST', '/api/v1/assistants', owner.secret, { name: 'Notes' });
    const assistantId: string = made.body.assistant.publicId;
    t.equal(await addReadyTextDocument(app.url, owner.secret, assistantId, 'Plans', DOCUMENT), 201);
    const scenario = {
      name: 'premium price',
      transport: 'chat',
      turns: [{ say: 'How much does the premium plan cost?' }],
      expect: [{ mustSay: '4.99 euros' }],
    };
    t.equal(
      (await api(app.url, 'POST', `/api/v1/assistants/${assistantId}/scenarios`, owner.secret, scenario)).status,
      201,
    );

    const dir = mkdtempSync(join(tmpdir(), 'parley-ci-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const junit = join(dir, 'parley.xml');
    // The CI job: the same command line on every build.
    const build = () =>
      runScript(CLI, ['--url', app.url, '--assistant', assistantId, '--junit', junit], {
        env: { PARLEY_API_KEY: owner.secret },
      });

    const green = await build();
    t.equal(green.code, 0, green.stdout + green.stderr);
    t.match(green.stdout, /PASS {2}premium price \(chat/);
    const passed = parseXml(readFileSync(junit, 'utf8'));
    t.match(passed.attrs, { tests: '1', failures: '0', errors: '0' });
    t.same(passed.children[0]!.children[0]!.children, [], 'the test case has no failure');

    // The owner replaces the document with one that gives another price.
    const listed = await api(app.url, 'GET', `/api/v1/documents?assistantId=${assistantId}`, owner.secret);
    t.equal(listed.status, 200, listed.text);
    t.equal(listed.body.documents.length, 1);
    const removed = await api(app.url, 'DELETE', `/api/v1/documents/${listed.body.documents[0].id}`, owner.secret);
    t.equal(removed.status, 200, removed.text);
    const changed = DOCUMENT.replace('4.99 euros', '7.49 euros');
    t.equal(await addReadyTextDocument(app.url, owner.secret, assistantId, 'Plans', changed), 201);

    const red = await build();
    t.equal(red.code, 1, 'the wrong price fails the build');
    t.match(red.stdout, /FAIL {2}premium price \(chat/);
    t.match(red.stdout, /never said it; the assistant said: ".*7\.49 euros/);
    t.match(red.stdout, /0 of 1 scenarios passed/);
    const failed = parseXml(readFileSync(junit, 'utf8'));
    t.match(failed.attrs, { tests: '1', failures: '1', errors: '0' });
    const [testcase] = failed.children[0]!.children;
    t.match(testcase, {
      name: 'testcase',
      attrs: { name: 'premium price' },
      children: [
        { name: 'failure', attrs: { type: 'expectation' }, text: /mustSay.*4\.99 euros.*never said it.*7\.49 euros/s },
      ],
    });
  },
);
