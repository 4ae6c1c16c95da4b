/**
 * Retrieval benchmark: top-5 passages over 100,000 chunks of one assistant, on a fresh database of the test
 * server (TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres). Target: p95 < 20 ms.
 *
 *   npx tsx native-bench/retrieval.ts [--chunks 100000] [--queries 500] [--keep]
 *
 * The corpus is synthetic but shaped like prose: a Zipf-distributed vocabulary (exponent 1) whose most
 * frequent ranks are real English stop words, ~120 words per passage, a heading per section. Questions are
 * 4–10 words drawn from the same distribution, so they mix stop words, common and rare terms.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createSql } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { addDocumentTerms, lockAssistantTerms, retrievePassages } from '../src/retrieval/index.js';

const args = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const CHUNKS = arg('chunks', 100_000);
const QUERIES = arg('queries', 500);
const KEEP = args.includes('--keep');
/** Measure again on a database a previous --keep run left (skips loading). */
const REUSE = (() => {
  const i = args.indexOf('--reuse');
  return i >= 0 ? args[i + 1] : undefined;
})();
const BASE_URL =
  process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const STOP = (
  'the of and to a in is it you that he was for on are with as i his they be at one have this from or had by ' +
  'but some what there we can out other were all your when up use word how said an each she which do their time if will way ' +
  'about many then them would write like so these her long make thing see him two has look more day could go come did my no ' +
  'most who over know than call first down side been now find any new work part take get place made live where after back ' +
  'little only round man year came show every good me give our under'
).split(' ');

// Deterministic PRNG so runs are comparable.
let seed = 0x9e3779b9;
function rand(): number {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return ((seed >>> 0) % 1_000_000) / 1_000_000;
}

const SYL = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tor',
  'sa',
  'vel',
  'qui',
  'dan',
  'por',
  'ex',
  'lin',
  'mar',
  'ost',
  'ul',
  'ber',
  'cen',
  'fi',
  'gro',
  'hap',
];
const VOCAB_SIZE = 30_000;
const vocab: string[] = [...STOP];
const seen = new Set(vocab);
while (vocab.length < VOCAB_SIZE) {
  const n = 2 + Math.floor(rand() * 3);
  let w = '';
  for (let i = 0; i < n; i++) w += SYL[Math.floor(rand() * SYL.length)];
  if (!seen.has(w)) {
    seen.add(w);
    vocab.push(w);
  }
}
// Zipf(1) cumulative distribution for sampling by rank.
const cdf: number[] = [];
let acc = 0;
for (let r = 1; r <= VOCAB_SIZE; r++) cdf.push((acc += 1 / r));
function word(): string {
  const x = rand() * acc;
  let lo = 0;
  let hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cdf[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return vocab[lo]!;
}
const words = (n: number) => Array.from({ length: n }, word).join(' ');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function load(sql: ReturnType<typeof createSql>): Promise<void> {
  await migrate(sql);
  await sql`insert into users (id, email, password_hash) values ('usr_bench', 'bench@example.test', 'x')`;
  await sql`insert into accounts (id, owner_user_id) values ('acct_bench', 'usr_bench')`;
  const assistantId = '00000000-0000-4000-8000-000000000001';
  await sql`insert into assistants (id, public_id, account_id, name, language) values (${assistantId}, 'asst_bench', 'acct_bench', 'Bench', 'english')`;
  // A second assistant with its own passages: retrieval must only look at one assistant's knowledge.
  const otherId = '00000000-0000-4000-8000-000000000002';
  await sql`insert into assistants (id, public_id, account_id, name, language) values (${otherId}, 'asst_other', 'acct_bench', 'Other', 'english')`;

  const started = performance.now();
  const perDoc = 200;
  const docs = Math.ceil(CHUNKS / perDoc);
  for (let d = 0; d < docs + Math.ceil(docs / 10); d++) {
    const docId = `doc_bench${d}`;
    // Every 11th document belongs to the other assistant; the measured one holds CHUNKS passages.
    const owner = d >= docs ? otherId : assistantId;
    await sql`insert into documents (id, assistant_id, account_id, type, name, status) values (${docId}, ${owner}, 'acct_bench', 'text', ${'Doc ' + d}, 'ready')`;
    const ordinals: number[] = [];
    const headings: string[] = [];
    const contents: string[] = [];
    for (let i = 0; i < perDoc && (d >= docs || d * perDoc + i < CHUNKS); i++) {
      ordinals.push(i);
      headings.push(`${words(3)} > ${words(4)}`);
      // ~1,000 characters, the chunker's target size.
      contents.push(words(130 + Math.floor(rand() * 40)));
    }
    await sql.begin(async (tx) => {
      await tx`
        insert into document_chunks (document_id, assistant_id, ordinal, heading, content, tsv)
        select ${docId}, ${owner}, c.o, c.h, c.t,
               setweight(to_tsvector('english', c.h), 'A') || setweight(to_tsvector('english', c.t), 'B')
        from unnest(${ordinals}::int[], ${headings}::text[], ${contents}::text[]) as c(o, h, t)`;
      await lockAssistantTerms(tx, owner);
      await addDocumentTerms(tx, owner, docId);
    });
  }
  await sql`vacuum analyze document_chunks`.catch(() => undefined);
  await sql`vacuum analyze assistant_lexemes`.catch(() => undefined);
  console.log(`loaded ${CHUNKS} chunks in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

async function main(): Promise<void> {
  const name = REUSE ?? `parley_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = postgres(BASE_URL, { max: 1, onnotice: () => undefined });
  if (!REUSE) await admin.unsafe(`create database "${name}"`);
  const url = new URL(BASE_URL);
  url.pathname = `/${name}`;
  const sql = createSql(url.toString(), { max: 2 });
  try {
    if (!REUSE) await load(sql);
    const assistantId = '00000000-0000-4000-8000-000000000001';
    const counted = await sql<
      Array<{ n: number }>
    >`select count(*) as n from document_chunks where assistant_id = ${assistantId}`;
    const n = counted[0]!.n;
    console.log(`measuring over ${n} chunks of one assistant`);
    const assistant = { id: assistantId, language: 'english' };
    for (let i = 0; i < 20; i++) await retrievePassages(sql, assistant, words(6)); // warm up
    const times: number[] = [];
    let empty = 0;
    for (let i = 0; i < QUERIES; i++) {
      const question = words(4 + Math.floor(rand() * 7));
      const t0 = performance.now();
      const passages = await retrievePassages(sql, assistant, question, 5);
      times.push(performance.now() - t0);
      if (passages.length === 0) empty++;
    }
    times.sort((a, b) => a - b);
    const result = {
      chunks: CHUNKS,
      measuredAssistantChunks: n,
      queries: QUERIES,
      emptyResults: empty,
      p50Ms: +percentile(times, 50).toFixed(2),
      p95Ms: +percentile(times, 95).toFixed(2),
      p99Ms: +percentile(times, 99).toFixed(2),
      maxMs: +times[times.length - 1]!.toFixed(2),
      targetP95Ms: 20,
    };
    console.log(JSON.stringify(result));
    console.log(result.p95Ms < 20 ? `PASS: p95 ${result.p95Ms} ms < 20 ms` : `FAIL: p95 ${result.p95Ms} ms >= 20 ms`);
    process.exitCode = result.p95Ms < 20 ? 0 : 1;
  } finally {
    await sql.end({ timeout: 5 });
    if (!KEEP && !REUSE) await admin.unsafe(`drop database if exists "${name}" with (force)`);
    else console.log(`kept database ${name}`);
    await admin.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
