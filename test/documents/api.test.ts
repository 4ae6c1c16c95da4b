import t from 'tap';
import { createParleyClient, ParleyError, uploadDocument } from '../../sdk/src/index.js';
import { allowAlso } from '../../src/documents/index.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, createOwner } from '../helpers/identity.js';
import { HANDBOOK_MD, makePdf, waitForDocument } from './fixtures.js';
import { startPageServer } from './page-server.js';

type Doc = { id: string; status: string; error: string | null; chunkCount: number; name: string; type: string };

t.test(
  'documents over the API: upload, URL, text and FAQ sources with a Bearer key, then list, reprocess, delete',
  async (t) => {
    const page = await startPageServer(t, {
      '/hours.html': (_req, res) =>
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end('<html><body><h1>Opening hours</h1><p>The shop opens at nine on weekdays.</p></body></html>'),
    });
    const { url, deps } = await startTestApp(t, {
      env: { UPLOAD_LIMIT_BYTES: String(64 * 1024) },
      knowledge: { documents: { addressPolicy: allowAlso(['127.0.0.1']), pollMs: 50, fetchTimeoutMs: 2000 } },
    });
    const owner = await createOwner(deps.sql);
    const other = await createOwner(deps.sql);
    const readOnly = await createOwner(deps.sql, { scopes: ['documents:read', 'assistants:write'] });
    const parley = createParleyClient({ baseUrl: url, apiKey: owner.secret });
    const { assistant } = await parley.POST('/api/v1/assistants', { body: { name: 'Shop helper' } });
    const theirs = await createParleyClient({ baseUrl: url, apiKey: other.secret }).POST('/api/v1/assistants', {
      body: { name: 'Theirs' },
    });
    const getDoc = async (id: string) =>
      (await parley.GET('/api/v1/documents/{documentId}', { params: { path: { documentId: id } } })).document as Doc;

    const curlForm = (fields: Record<string, string | Blob>, filename = 'handbook.md') => {
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) {
        if (typeof v === 'string') form.append(k, v);
        else form.append(k, v, filename);
      }
      return form;
    };

    t.test(
      'multipart upload as curl -F sends it: 201, pending, then ready; the assistant answers from it',
      async (t) => {
        const res = await fetch(`${url}/api/v1/documents/upload`, {
          method: 'POST',
          headers: bearer(owner.secret),
          body: curlForm({ assistantId: assistant.publicId, file: new Blob([HANDBOOK_MD], { type: 'text/markdown' }) }),
        });
        t.equal(res.status, 201);
        const doc = ((await res.json()) as { document: Doc }).document;
        t.equal(doc.name, 'handbook.md');
        t.equal(doc.type, 'file');
        const done = await waitForDocument(() => getDoc(doc.id));
        t.equal(done.status, 'ready');
        const chat = await parley.POST('/api/v1/chat', {
          body: { assistantId: assistant.publicId, message: 'How long do I have to request a refund?' },
        });
        t.ok(
          chat.sources.some((s) => s.documentId === doc.id),
          'the answer cites the uploaded document',
        );
      },
    );

    t.test('the SDK uploads bytes and a Blob; the type is checked against the bytes', async (t) => {
      const pdf = await uploadDocument(parley, {
        assistantId: assistant.id,
        file: new Uint8Array(makePdf(['Warranty', 'Every product has a two year warranty.'])),
        filename: 'warranty.pdf',
      });
      t.equal(pdf.document.mimeType, 'application/pdf');
      t.equal((await waitForDocument(() => getDoc(pdf.document.id))).status, 'ready');
      const txt = await uploadDocument(parley, {
        assistantId: assistant.publicId,
        file: new Blob(['Parking is free after six.']),
        filename: 'parking.txt',
      });
      t.equal(txt.document.name, 'parking.txt');
      const bad = await uploadDocument(parley, {
        assistantId: assistant.publicId,
        file: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
        filename: 'logo.png',
      }).catch((e: unknown) => e);
      t.ok(bad instanceof ParleyError);
      t.equal((bad as ParleyError).status, 415);
      t.equal((bad as ParleyError).code, 'DOCUMENT_UNSUPPORTED_TYPE');
    });

    t.test('raw body with ?filename= works like the dashboard upload', async (t) => {
      const res = await fetch(
        `${url}/api/v1/documents/upload?assistantId=${assistant.publicId}&filename=${encodeURIComponent('hours.html')}`,
        {
          method: 'POST',
          headers: { ...bearer(owner.secret), 'content-type': 'text/html' },
          body: '<p>Open daily.</p>',
        },
      );
      t.equal(res.status, 201);
    });

    t.test('refusals: no assistant, no file, too large, another account, a read-only key', async (t) => {
      const noAssistant = await fetch(`${url}/api/v1/documents/upload`, {
        method: 'POST',
        headers: bearer(owner.secret),
        body: curlForm({ file: new Blob(['hello']) }),
      });
      t.equal(noAssistant.status, 400);
      const body = (await noAssistant.json()) as { code: string; details: { issues: Array<{ path: string }> } };
      t.equal(body.code, 'VALIDATION_FAILED');
      t.equal(body.details.issues[0]!.path, 'query.assistantId');
      const noFile = await fetch(`${url}/api/v1/documents/upload?assistantId=${assistant.publicId}`, {
        method: 'POST',
        headers: bearer(owner.secret),
        body: curlForm({ note: 'no file here' }),
      });
      t.equal(noFile.status, 400);
      t.equal(((await noFile.json()) as { code: string }).code, 'DOCUMENT_EMPTY_UPLOAD');
      const big = await fetch(`${url}/api/v1/documents/upload?assistantId=${assistant.publicId}&filename=big.txt`, {
        method: 'POST',
        headers: { ...bearer(owner.secret), 'content-type': 'text/plain' },
        body: 'x'.repeat(65 * 1024),
      });
      t.equal(big.status, 413);
      const foreign = await fetch(`${url}/api/v1/documents/upload?assistantId=${theirs.assistant.publicId}`, {
        method: 'POST',
        headers: bearer(owner.secret),
        body: curlForm({ file: new Blob(['hello']) }, 'a.txt'),
      });
      t.equal(foreign.status, 404);
      const readOnlyUpload = await fetch(`${url}/api/v1/documents/upload?assistantId=${assistant.publicId}`, {
        method: 'POST',
        headers: bearer(readOnly.secret),
        body: curlForm({ file: new Blob(['hello']) }, 'a.txt'),
      });
      t.equal(readOnlyUpload.status, 403);
      const privateUrl = await fetch(`${url}/api/v1/documents`, {
        method: 'POST',
        headers: { ...bearer(owner.secret), 'content-type': 'application/json' },
        body: JSON.stringify({ assistantId: assistant.publicId, type: 'url', url: 'http://10.0.0.1/' }),
      });
      t.equal(privateUrl.status, 400);
      t.equal(((await privateUrl.json()) as { code: string }).code, 'DOCUMENT_URL_NOT_ALLOWED');
    });

    t.test('URL, text and FAQ sources; list, reprocess and delete', async (t) => {
      const add = (body: object) => parley.POST('/api/v1/documents', { body: body as never });
      const urlDoc = (
        await add({ assistantId: assistant.publicId, type: 'url', url: `${page.url}/hours.html`, name: 'Hours page' })
      ).document;
      const textDoc = (
        await add({ assistantId: assistant.publicId, type: 'text', name: 'Delivery', text: 'We deliver on Saturdays.' })
      ).document;
      const faqDoc = (
        await add({
          assistantId: assistant.publicId,
          type: 'faq',
          name: 'FAQ',
          pairs: [{ question: 'Do you ship abroad?', answer: 'Yes, to every EU country.' }],
        })
      ).document;
      for (const d of [urlDoc, textDoc, faqDoc]) {
        t.equal((await waitForDocument(() => getDoc(d.id))).status, 'ready', `${d.type} source is ready`);
      }
      const listed = await parley.GET('/api/v1/documents', { params: { query: { assistantId: assistant.publicId } } });
      for (const d of [urlDoc, textDoc, faqDoc])
        t.ok(
          listed.documents.some((x) => x.id === d.id),
          `${d.name} listed`,
        );
      const again = await parley.POST('/api/v1/documents/{documentId}/reprocess', {
        params: { path: { documentId: textDoc.id } },
        body: {},
      });
      t.equal(again.document.status, 'pending');
      t.equal((await waitForDocument(() => getDoc(textDoc.id))).status, 'ready');
      await parley.DELETE('/api/v1/documents/{documentId}', { params: { path: { documentId: faqDoc.id } } });
      const gone = await getDoc(faqDoc.id).catch((e: unknown) => e);
      t.equal((gone as ParleyError).status, 404);
    });
  },
);
