import t from 'tap';
import { chunkText } from '../../src/documents/chunker.js';
import { builtinPdfExtractor, detectContentKind, extractText, htmlToText } from '../../src/documents/extract/index.js';
import { boundaryOf, parseMultipart } from '../../src/documents/multipart.js';
import { makePdf } from './fixtures.js';

t.test('chunker: every passage keeps its heading path; long sections split at sentences', async (t) => {
  const text =
    '# Guide\n\nIntro text.\n\n## Refunds\n\nRefund rules here.\n\n### Exceptions\n\nGift cards excluded.\n\n## Shipping\n\nShips fast.\n\nSetext title\n============\n\nUnder setext.';
  const chunks = chunkText(text);
  t.same(
    chunks.map((c) => [c.heading, c.content]),
    [
      ['Guide', 'Intro text.'],
      ['Guide > Refunds', 'Refund rules here.'],
      ['Guide > Refunds > Exceptions', 'Gift cards excluded.'],
      ['Guide > Shipping', 'Ships fast.'],
      ['Setext title', 'Under setext.'],
    ],
  );
  const long = `# Long\n\n${Array.from({ length: 80 }, (_, i) => `Sentence number ${i} talks about things.`).join(' ')}`;
  const parts = chunkText(long, { targetChars: 400, maxChars: 600 });
  t.ok(parts.length > 3, 'split into several passages');
  t.ok(
    parts.every((p) => p.heading === 'Long' && p.content.length <= 600),
    'each under the cap, each with its heading',
  );
  t.ok(
    parts.every((p) => /\.$/.test(p.content)),
    'cut at sentence ends',
  );
  t.same(
    chunkText('```\n# not a heading\n```\n\nafter').map((c) => c.heading),
    [null],
    'headings inside code fences are text',
  );
  t.same(chunkText('   \n\n  '), [], 'nothing to index');
});

t.test('content detection: declared type, name and bytes must agree', async (t) => {
  const pdf = makePdf(['x']);
  t.equal(detectContentKind({ filename: 'a.pdf', contentType: 'application/pdf', bytes: pdf }), 'pdf');
  t.equal(
    detectContentKind({ filename: 'a.bin', contentType: 'application/octet-stream', bytes: pdf }),
    'pdf',
    'sniffed',
  );
  t.equal(
    detectContentKind({ filename: 'notes.md', contentType: 'text/plain', bytes: Buffer.from('# x') }),
    'markdown',
  );
  t.equal(
    detectContentKind({ filename: 'page', contentType: 'text/html; charset=utf-8', bytes: Buffer.from('<p>x</p>') }),
    'html',
  );
  t.throws(() => detectContentKind({ filename: 'a.pdf', contentType: 'application/pdf', bytes: Buffer.from('hello') }));
  t.throws(() =>
    detectContentKind({ filename: 'a.txt', contentType: 'text/plain', bytes: pdf.subarray(0, 20).fill(0, 10) }),
  );
  t.throws(() => detectContentKind({ filename: 'a.zip', contentType: 'application/zip', bytes: Buffer.from('PK') }));
  t.throws(() =>
    detectContentKind({
      filename: 'img.png',
      contentType: 'application/octet-stream',
      bytes: Buffer.from([0x89, 0x50, 0x00]),
    }),
  );
});

t.test('the built-in PDF extractor reads text drawn with Tj, TJ, quotes and moves', async (t) => {
  const text = await builtinPdfExtractor.extract(makePdf(['Warranty (two years)', 'Back\\slash and more']));
  t.equal(text, 'Warranty (two years)\nBack\\slash and more');
  const { text: viaExtract } = await extractText('pdf', makePdf(['Hello PDF']), builtinPdfExtractor);
  t.equal(viaExtract, 'Hello PDF');
});

t.test('HTML becomes Markdown-like text; scripts, styles and entities handled', async (t) => {
  const text = htmlToText(
    '<html><head><style>p{}</style></head><body><nav>menu</nav><h2>Prices &amp; plans</h2><p>From 5&nbsp;&euro; &#8212; cheap.</p><ul><li>One</li><li>Two</li></ul><script>alert(1)</script></body></html>',
  );
  t.equal(text, '## Prices & plans\n\nFrom 5 € — cheap.\n\n- One\n- Two');
});

t.test('multipart bodies: the file part with its name and type', async (t) => {
  const boundary = '----parley123';
  const body = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nignored\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="guide.md"\r\nContent-Type: text/markdown\r\n\r\n# Guide\r\n\r\nBody\r\n` +
      `--${boundary}--\r\n`,
  );
  t.equal(boundaryOf(`multipart/form-data; boundary=${boundary}`), boundary);
  t.equal(boundaryOf('text/plain'), undefined);
  const parts = parseMultipart(body, boundary);
  t.equal(parts.length, 2);
  t.same(
    { name: parts[1]!.name, filename: parts[1]!.filename, contentType: parts[1]!.contentType },
    { name: 'file', filename: 'guide.md', contentType: 'text/markdown' },
  );
  t.equal(parts[1]!.data.toString(), '# Guide\r\n\r\nBody');
});
