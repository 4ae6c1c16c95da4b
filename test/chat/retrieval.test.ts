import t from 'tap';
import { createSql, migrate, startEmbeddedPostgres, type Sql } from '../../src/db/index.js';
import { chunkText } from '../../src/documents/chunker.js';
import { replaceChunks } from '../../src/documents/queries.js';
import {
  addDocumentTerms,
  lockAssistantTerms,
  planQuery,
  removeDocumentTerms,
  retrievePassages,
} from '../../src/retrieval/index.js';
import { createTestDatabase } from '../helpers/db.js';
import { scratchDir } from '../helpers/scratch.js';

const ASSISTANT = '00000000-0000-4000-8000-00000000000a';
const OTHER = '00000000-0000-4000-8000-00000000000b';

const DOCS: Record<string, string> = {
  doc_refunds:
    '# Refunds\n\nCustomers can request a refund within 30 days of delivery. Refunds go back to the original card.\n\n## Exceptions\n\nGift cards are not refundable.',
  doc_shipping:
    '# Shipping\n\nOrders ship within two business days. Shipping to islands takes longer.\n\n## International shipping\n\nWe ship to every country in the European Union.',
  doc_hours: '# Opening hours\n\nThe shop opens at nine and closes at six. On Sundays we are closed.',
  doc_running: 'Running shoes are tested by running coaches. The runners ran fifty kilometres in them.',
};

async function seed(sql: Sql, language: string): Promise<void> {
  await sql`insert into users (id, email, password_hash) values ('usr_r', 'r@example.test', 'x')`;
  await sql`insert into accounts (id, owner_user_id) values ('acct_r', 'usr_r')`;
  for (const id of [ASSISTANT, OTHER]) {
    await sql`insert into assistants (id, public_id, account_id, name, language) values (${id}, ${'asst_' + id.slice(-1)}, 'acct_r', 'R', ${language})`;
  }
  for (const [id, text] of Object.entries(DOCS)) {
    for (const [owner, docId] of [
      [ASSISTANT, id],
      [OTHER, `${id}_other`],
    ] as const) {
      await sql`insert into documents (id, assistant_id, account_id, type, name, status) values (${docId}, ${owner}, 'acct_r', 'text', ${id.slice(4)}, 'pending')`;
      await sql.begin(async (tx) => {
        await lockAssistantTerms(tx, owner);
        await removeDocumentTerms(tx, owner, docId);
        await replaceChunks(tx, { id: docId, assistantId: owner, language }, chunkText(text));
        await addDocumentTerms(tx, owner, docId);
      });
    }
  }
}

const QUESTIONS = [
  'How long do I have to get a refund?',
  'Do you ship internationally to the EU?',
  'When are you open on sunday?',
  'Are gift cards refundable?',
  'run',
  'the and of',
  'quantum chromodynamics',
  "what's the refund' policy\\ & | !(",
];

async function rankings(sql: Sql, language: string) {
  const out: Record<string, Array<{ documentId: string; heading: string | null; score: number }>> = {};
  for (const q of QUESTIONS) {
    out[q] = (await retrievePassages(sql, { id: ASSISTANT, language }, q, 5)).map((p) => ({
      documentId: p.documentId,
      heading: p.heading,
      score: Number(p.score.toFixed(5)),
    }));
  }
  return out;
}

t.test('retrieval ranks the same on the server and on the embedded PGlite', async (t) => {
  const server = await createTestDatabase(t);
  await seed(server.sql, 'english');
  const dir = scratchDir('parley-retrieval-');
  const embedded = await startEmbeddedPostgres({ dataDir: dir, maxConnections: 2 });
  const local = createSql(embedded.url, { max: 1, idleTimeoutSeconds: 0, maxLifetimeSeconds: null });
  t.teardown(async () => {
    await local.end({ timeout: 5 });
    await embedded.close();
  });
  await migrate(local);
  await seed(local, 'english');

  const a = await rankings(server.sql, 'english');
  const b = await rankings(local, 'english');
  t.same(b, a, 'identical passages, order and scores');

  t.equal(a[QUESTIONS[0]!]![0]?.documentId, 'doc_refunds', 'the refund question finds the refund policy');
  t.equal(a[QUESTIONS[1]!]![0]?.heading, 'Shipping > International shipping', 'heading matches weigh more');
  t.equal(a[QUESTIONS[2]!]![0]?.documentId, 'doc_hours');
  t.equal(a[QUESTIONS[3]!]![0]?.heading, 'Refunds > Exceptions');
  t.equal(a['run']![0]?.documentId, 'doc_running', 'english stemming: run matches running/runners');
  t.same(a['the and of'], [], 'stop words alone match nothing');
  t.same(a['quantum chromodynamics'], [], 'unknown words match nothing');
  t.ok(a[QUESTIONS[7]!]!.length > 0, 'query syntax characters are harmless');
  for (const q of QUESTIONS)
    t.ok(
      a[q]!.every((p) => !p.documentId.endsWith('_other')),
      `only this assistant's passages (${q})`,
    );
});

t.test('the language is per assistant: simple does not stem', async (t) => {
  const server = await createTestDatabase(t);
  await seed(server.sql, 'simple');
  const simple = await retrievePassages(server.sql, { id: ASSISTANT, language: 'simple' }, 'run', 5);
  t.same(simple, [], 'no stemming: "run" is not "running"');
  const exact = await retrievePassages(server.sql, { id: ASSISTANT, language: 'simple' }, 'running', 5);
  t.equal(exact[0]?.documentId, 'doc_running');
});

t.test('query planning: rare terms select candidates, common ones only rank', async (t) => {
  t.equal(planQuery([{ lexeme: 'x', df: 0 }]), undefined, 'nothing that occurs: no query');
  const plan = planQuery([
    { lexeme: 'common', df: 5000 },
    { lexeme: 'rare', df: 3 },
    { lexeme: 'mid', df: 200 },
  ])!;
  t.equal(plan.candidateQuery, "'rare' | 'mid'");
  t.equal(plan.fullQuery, "'rare' | 'mid' | 'common'");
  const allCommon = planQuery([
    { lexeme: 'a', df: 9000 },
    { lexeme: 'b', df: 5000 },
  ])!;
  t.equal(allCommon.candidateQuery, "'b' & 'a'", 'only common terms: the two rarest together');
  t.equal(planQuery([{ lexeme: "it's", df: 2 }])!.fullQuery, "'it''s'", 'quotes are escaped');
});
