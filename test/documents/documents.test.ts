import t from 'tap';
import { allowAlso } from '../../src/documents/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner, dashboardHeaders, login } from '../helpers/identity.js';
import { chunkCount, HANDBOOK_MD, makePdf, makeTextlessPdf, waitForDocument } from './fixtures.js';
import { startPageServer } from './page-server.js';

type Doc = { id: string; status: string; error: string | null; chunkCount: number; name: string; type: string };

t.test('documents: uploads, sources, v1 list/get/delete/reprocess, refusals, failure and retry', async (t) => {
  let flaky = 0;
  const page = await startPageServer(t, {
    '/faq.html': (_req, res) =>
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<html><head><title>Help centre</title><script>evil()</script></head><body><h1>Returns</h1><p>Returns are free for 60 days.</p></body></html>',
        ),
    '/flaky': (_req, res) => {
      if (++flaky < 3) res.writeHead(503).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('Opening hours are nine to five on weekdays.');
    },
    '/missing': (_req, res) => res.writeHead(404).end(),
  });
  const { url, deps } = await startTestApp(t, {
    env: { UPLOAD_LIMIT_BYTES: String(64 * 1024) },
    knowledge: {
      documents: { addressPolicy: allowAlso(['127.0.0.1']), backoffMs: () => 50, pollMs: 50, fetchTimeoutMs: 2000 },
    },
  });
  const owner = await createOwner(deps.sql);
  const other = await createOwner(deps.sql);
  const readOnly = await createOwner(deps.sql, { scopes: ['documents:read'] });
  const cookie = await login(url, owner.email, owner.password);
  const otherCookie = await login(url, other.email, other.password);
  const mkAssistant = async (secret: string) =>
    (
      (await (
        await fetch(`${url}/api/v1/assistants`, {
          method: 'POST',
          headers: { ...bearer(secret), 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Docs' }),
        })
      ).json()) as { assistant: { id: string; publicId: string } }
    ).assistant;
  const assistant = await mkAssistant(owner.secret);
  const theirs = await mkAssistant(other.secret);
  const upload = (
    body: string | Buffer | Uint8Array,
    contentType: string,
    filename?: string,
    who = cookie,
    id = assistant.publicId,
  ) =>
    fetch(`${url}/api/assistants/${id}/uploads${filename ? `?filename=${encodeURIComponent(filename)}` : ''}`, {
      method: 'POST',
      headers: { ...dashboardHeaders(url, who), 'content-type': contentType },
      body,
    });
  const addSource = (body: object, who = cookie, id = assistant.publicId) =>
    fetch(`${url}/api/assistants/${id}/sources`, {
      method: 'POST',
      headers: dashboardHeaders(url, who),
      body: JSON.stringify(body),
    });
  const v1 = (path: string, init: RequestInit = {}, secret = owner.secret) =>
    fetch(`${url}${path}`, { ...init, headers: { ...bearer(secret), 'content-type': 'application/json' } });
  const getDoc = async (id: string) =>
    ((await (await v1(`/api/v1/documents/${id}`)).json()) as { document: Doc }).document;
  const docOf = async (res: Response) => ((await res.json()) as { document: Doc }).document;

  t.test('uploads: Markdown, HTML, text, PDF become ready; the type is checked against the bytes', async (t) => {
    const md = await docOf(await upload(HANDBOOK_MD, 'text/markdown', 'handbook.md'));
    const html = await docOf(await upload('<h2>Hours</h2><p>Open daily.</p>', 'text/html', 'hours.html'));
    const txt = await docOf(await upload('Plain words about parking.', 'application/octet-stream', 'parking.txt'));
    const pdf = await docOf(
      await upload(makePdf(['Warranty', 'Every product has a two year warranty.']), 'application/pdf', 'warranty.pdf'),
    );
    for (const d of [md, html, txt, pdf]) {
      const done = await waitForDocument(() => getDoc(d.id));
      t.equal(done.status, 'ready', `${d.name} ready (${done.error})`);
    }
    t.ok((await getDoc(md.id)).chunkCount >= 2, 'the handbook has a passage per section');
    const headings = await deps.sql<
      Array<{ heading: string | null }>
    >`select heading from document_chunks where document_id = ${md.id} order by ordinal`;
    t.ok(
      headings.some((h) => h.heading === 'Store handbook > Refunds'),
      'passages keep their heading path',
    );

    const png = await upload(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]), 'image/png', 'logo.png');
    t.equal(png.status, 415, 'an image is refused');
    const fakePdf = await upload('this is not a pdf', 'application/pdf', 'fake.pdf');
    t.equal(fakePdf.status, 415, 'a "PDF" whose bytes are not a PDF is refused');
    t.equal(((await fakePdf.json()) as { code: string }).code, 'DOCUMENT_UNSUPPORTED_TYPE');
    const binaryText = await upload(Buffer.from([0xff, 0xfe, 0x00, 0x41]), 'text/plain', 'bin.txt');
    t.equal(binaryText.status, 415, 'binary bytes claiming to be text are refused');
    const tooBig = await upload('x'.repeat(70 * 1024), 'text/plain', 'big.txt');
    t.equal(tooBig.status, 413, 'over UPLOAD_LIMIT_BYTES');
    const empty = await upload('', 'text/plain', 'empty.txt');
    t.equal(empty.status, 400, 'an empty upload');
  });

  t.test("dashboard routes need a session, and only the owner's assistant", async (t) => {
    const noSession = await fetch(`${url}/api/assistants/${assistant.publicId}/uploads?filename=a.txt`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: url },
      body: 'hello',
    });
    t.equal(noSession.status, 401, 'no session');
    const withKey = await fetch(`${url}/api/assistants/${assistant.publicId}/uploads?filename=a.txt`, {
      method: 'POST',
      headers: { ...bearer(owner.secret), 'content-type': 'text/plain' },
      body: 'hello',
    });
    t.equal(withKey.status, 401, 'an API key is not a dashboard session');
    t.equal((await upload('hello', 'text/plain', 'a.txt', otherCookie)).status, 404, "another account's session: 404");
    t.equal(
      (await upload('hello', 'text/plain', 'a.txt', cookie, theirs.publicId)).status,
      404,
      "another account's assistant: 404",
    );
    t.equal((await addSource({ type: 'text', name: 'x', text: 'y' }, cookie, theirs.id)).status, 404);
    t.equal((await addSource({ type: 'text', name: '', text: 'y' })).status, 400, 'invalid source body');
    t.equal((await addSource({ type: 'pdf', name: 'x' })).status, 400, 'unknown source type');
  });

  t.test('sources: text, FAQ and URL (HTML page); private URLs refused up front', async (t) => {
    const text = await docOf(
      await addSource({ type: 'text', name: 'Notes', text: '# Delivery\n\nWe deliver on Saturdays too.' }),
    );
    const faq = await docOf(
      await addSource({
        type: 'faq',
        name: 'FAQ',
        pairs: [{ question: 'Do you ship abroad?', answer: 'Yes, to the whole EU.' }],
      }),
    );
    const web = await docOf(await addSource({ type: 'url', url: `${page.url}/faq.html` }));
    for (const d of [text, faq, web])
      t.equal((await waitForDocument(() => getDoc(d.id))).status, 'ready', `${d.type} ready`);
    t.equal((await getDoc(web.id)).name, 'Help centre', 'an HTML page is named by its title');
    const [stored] = await deps.sql<
      Array<{ content: string; heading: string }>
    >`select content, heading from document_chunks where document_id = ${web.id}`;
    t.equal(stored?.heading, 'Returns');
    t.notMatch(stored?.content ?? '', /evil/, 'scripts are not indexed');
    for (const bad of [
      'http://10.0.0.1/',
      'http://[::1]/',
      'http://localhost/',
      'file:///etc/passwd',
      'http://169.254.169.254/latest',
    ]) {
      const res = await addSource({ type: 'url', url: bad });
      t.equal(res.status, 400, `${bad} refused`);
    }
    const list = await fetch(`${url}/api/assistants/${assistant.id}/sources?limit=100`, {
      headers: dashboardHeaders(url, cookie),
    });
    t.equal(list.status, 200);
    t.ok(((await list.json()) as { documents: Doc[] }).documents.some((d) => d.id === web.id));
  });

  t.test(
    'ingestion failure and retry: a flaky page is retried with backoff until it works; a missing page fails',
    async (t) => {
      const flakyDoc = await docOf(await addSource({ type: 'url', url: `${page.url}/flaky`, name: 'Hours' }));
      const done = await waitForDocument(() => getDoc(flakyDoc.id));
      t.equal(done.status, 'ready', 'ready after retries');
      t.equal(page.hits['/flaky'], 3, 'two failed attempts, then success');
      const missing = await docOf(await addSource({ type: 'url', url: `${page.url}/missing`, name: 'Gone' }));
      const failed = await waitForDocument(() => getDoc(missing.id));
      t.equal(failed.status, 'failed');
      t.match(failed.error, /HTTP 404/, 'the owner reads why');
      t.equal(page.hits['/missing'], 1, 'a 404 is not retried');
      const textless = await docOf(await upload(makeTextlessPdf(), 'application/pdf', 'scan.pdf'));
      const noText = await waitForDocument(() => getDoc(textless.id));
      t.equal(noText.status, 'failed');
      t.match(noText.error, /No text could be extracted/);
    },
  );

  t.test(
    'v1 routes: list with pagination and filter, get, reprocess, delete removes chunks; 401/403/404',
    async (t) => {
      const page1 = await v1(`/api/v1/documents?assistantId=${assistant.publicId}&limit=2`);
      t.equal(page1.status, 200);
      const body1 = (await page1.json()) as { documents: Doc[]; nextCursor: string | null };
      t.equal(body1.documents.length, 2);
      t.type(body1.nextCursor, 'string');
      const page2 = (await (
        await v1(`/api/v1/documents?assistantId=${assistant.id}&limit=2&cursor=${body1.nextCursor}`)
      ).json()) as { documents: Doc[] };
      t.notOk(
        page2.documents.some((d) => body1.documents.some((e) => e.id === d.id)),
        'pages do not overlap',
      );
      t.equal((await v1('/api/v1/documents?cursor=garbage')).status, 400, 'a tampered cursor is a 400');
      t.equal(
        (await v1(`/api/v1/documents?assistantId=${theirs.id}`)).status,
        404,
        "listing another account's assistant: 404",
      );
      const everything = (await (await v1('/api/v1/documents?limit=100', {}, other.secret)).json()) as {
        documents: Doc[];
      };
      t.same(everything.documents, [], 'another account sees none of them');

      const all = (await (await v1(`/api/v1/documents?assistantId=${assistant.id}&limit=100`)).json()) as {
        documents: Doc[];
      };
      const target = all.documents.find((d) => d.status === 'ready' && d.type === 'file')!;
      t.equal((await v1(`/api/v1/documents/${target.id}`, {}, other.secret)).status, 404, 'cross-account get: 404');
      t.equal(
        (await v1(`/api/v1/documents/${target.id}`, { method: 'DELETE' }, other.secret)).status,
        404,
        'cross-account delete: 404',
      );
      t.equal(
        (await v1(`/api/v1/documents/${target.id}/reprocess`, { method: 'POST', body: '{}' }, other.secret)).status,
        404,
        'cross-account reprocess: 404',
      );
      t.equal((await fetch(`${url}/api/v1/documents/${target.id}`)).status, 401, 'no key');
      t.equal(
        (await v1(`/api/v1/documents/${target.id}`, { method: 'DELETE' }, readOnly.secret)).status,
        403,
        'read-only key cannot delete',
      );
      t.equal(
        (await v1(`/api/v1/documents/${target.id}/reprocess`, { method: 'POST', body: '{}' }, readOnly.secret)).status,
        403,
        'read-only key cannot reprocess',
      );
      t.equal((await v1('/api/v1/documents/doc_nope')).status, 404);
      t.equal(
        (await v1(`/api/v1/documents/${target.id}/reprocess`, { method: 'POST', body: '{"x":1}' })).status,
        400,
        'reprocess takes no fields',
      );

      const re = await v1(`/api/v1/documents/${target.id}/reprocess`, { method: 'POST', body: '{}' });
      t.equal(re.status, 202);
      t.equal(((await re.json()) as { document: Doc }).document.status, 'pending', 'back to pending');
      t.equal((await waitForDocument(() => getDoc(target.id))).status, 'ready', 'ready again');
      t.ok((await chunkCount(deps.sql, target.id)) > 0);

      const del = await v1(`/api/v1/documents/${target.id}`, { method: 'DELETE' });
      t.equal(del.status, 200);
      t.same(await del.json(), { ok: true });
      t.equal(await chunkCount(deps.sql, target.id), 0, 'its chunks are gone');
      t.equal((await v1(`/api/v1/documents/${target.id}`)).status, 404);
    },
  );
});
