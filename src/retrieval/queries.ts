import type { Sql, TransactionSql } from '../db/index.js';

type Db = Sql | TransactionSql;

export interface PassageRow {
  chunkId: number;
  documentId: string;
  documentName: string;
  heading: string | null;
  content: string;
  score: number;
}

export interface QueryLexeme {
  lexeme: string;
  /** In how many of the assistant's passages the lexeme occurs (0: none, it cannot match). */
  df: number;
}

/** The question's lexemes (a correlated lookup: always primary-key probes, never a scan of the counts) in the assistant's language (stemmed, stop words removed), with their frequency. */
export async function questionLexemes(
  sql: Db,
  input: { assistantId: string; language: string; text: string },
): Promise<QueryLexeme[]> {
  return sql<QueryLexeme[]>`
    select l.lexeme,
           coalesce((select s.df from assistant_lexemes s where s.assistant_id = ${input.assistantId} and s.lexeme = l.lexeme), 0)::int as df
    from unnest(tsvector_to_array(to_tsvector(${input.language}::regconfig, ${input.text}))) as l(lexeme)`;
}

/**
 * Ranks the candidates selected by `candidateQuery` with the full query and returns the top `limit`.
 * Candidates come from the GIN index and are capped at `candidateCap`; ts_rank (length-normalised, flag 1)
 * reads only their `tsv` (kept in the heap row); text and document name are read for the winners only.
 */
export async function rankPassages(
  sql: Db,
  input: { assistantId: string; candidateQuery: string; fullQuery: string; candidateCap: number; limit: number },
): Promise<PassageRow[]> {
  return sql<PassageRow[]>`
    with top as (
      select c.id, c.document_id, ts_rank(c.tsv, ${input.fullQuery}::tsquery, 1) as score
      from (
        select id, document_id, tsv from document_chunks
        where assistant_id = ${input.assistantId} and tsv @@ ${input.candidateQuery}::tsquery
        limit ${input.candidateCap}
      ) c
      order by score desc, c.id asc
      limit ${input.limit})
    select top.id as chunk_id, top.document_id, ch.heading, ch.content, top.score,
           (select d.name from documents d where d.id = top.document_id) as document_name
    from top
    join document_chunks ch on ch.id = top.id
    order by top.score desc, top.id asc`;
}

// ---- index maintenance (called by documents and assistants inside their transactions) --------------------

/** Serialises lexeme-count changes of one assistant (concurrent ingestions would otherwise deadlock). */
export async function lockAssistantTerms(sql: TransactionSql, assistantId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext('parley:lexemes'), hashtext(${assistantId}))`;
}

/** Adds the lexemes of a document's current passages to the assistant's counts. */
export async function addDocumentTerms(sql: TransactionSql, assistantId: string, documentId: string): Promise<void> {
  await sql`
    insert into assistant_lexemes (assistant_id, lexeme, df)
    select ${assistantId}, l, count(*)::int
    from document_chunks c, unnest(tsvector_to_array(c.tsv)) as l
    where c.document_id = ${documentId}
    group by l order by l
    on conflict (assistant_id, lexeme) do update set df = assistant_lexemes.df + excluded.df`;
}

/** Subtracts the lexemes of a document's current passages (before they are deleted or replaced). */
export async function removeDocumentTerms(sql: TransactionSql, assistantId: string, documentId: string): Promise<void> {
  await sql`
    with lex as (
      select l as lexeme, count(*)::int as n
      from document_chunks c, unnest(tsvector_to_array(c.tsv)) as l
      where c.document_id = ${documentId}
      group by l)
    update assistant_lexemes s set df = s.df - lex.n
    from lex where s.assistant_id = ${assistantId} and s.lexeme = lex.lexeme`;
  await sql`delete from assistant_lexemes where assistant_id = ${assistantId} and df <= 0`;
}

/** Recounts an assistant's lexemes from scratch (after its language changed). */
export async function rebuildAssistantTerms(sql: TransactionSql, assistantId: string): Promise<void> {
  await sql`delete from assistant_lexemes where assistant_id = ${assistantId}`;
  await sql`
    insert into assistant_lexemes (assistant_id, lexeme, df)
    select ${assistantId}, l, count(*)::int
    from document_chunks c, unnest(tsvector_to_array(c.tsv)) as l
    where c.assistant_id = ${assistantId}
    group by l`;
}
