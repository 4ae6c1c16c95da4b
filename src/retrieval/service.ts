import type { Sql } from '../db/index.js';
import { withoutTitleLines } from '../providers/chat/index.js';
import { questionLexemes, rankPassages, type PassageRow, type QueryLexeme } from './queries.js';

/** A ranked passage of a ready document, as the query returns it. */
export type Passage = PassageRow;

/** At most this many distinct words of a question are searched (a pasted essay should not scan the index). */
export const MAX_QUERY_WORDS = 32;
/** Candidate budget: the rare terms chosen may match at most about this many passages together. */
export const CANDIDATE_BUDGET = 400;
/** Hard cap on ranked candidates whatever the terms (when every term is common). */
export const CANDIDATE_CAP = 400;

/** Letters and digits only: nothing a visitor types reaches the query parser as syntax. */
export function questionWords(question: string): string {
  const words = question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_QUERY_WORDS).join(' ');
}

/** A lexeme as a tsquery operand: quoted, with quotes and backslashes doubled (tsquery input syntax). */
export function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

export interface QueryPlan {
  /** Selects candidates through the GIN index: the rarest terms (OR), or the two rarest (AND) when all are common. */
  candidateQuery: string;
  /** Ranks the candidates: every term that occurs at all (OR). */
  fullQuery: string;
}

/**
 * Chooses how to search, from how often each term occurs in this assistant's passages. Rare terms carry
 * the meaning of a question; a term found in a large share of passages hardly separates them. So
 * candidates are the passages containing the rarest terms, as many terms as fit in CANDIDATE_BUDGET
 * (always at least the rarest), and ts_rank then orders them by all terms. Cost stays bounded however
 * large the knowledge grows, and a passage that shares only common words with the question is left out.
 */
export function planQuery(lexemes: QueryLexeme[]): QueryPlan | undefined {
  const terms = lexemes.filter((l) => l.df > 0).sort((a, b) => a.df - b.df || a.lexeme.localeCompare(b.lexeme));
  if (terms.length === 0) return undefined;
  const chosen: QueryLexeme[] = [];
  let total = 0;
  for (const term of terms) {
    if (chosen.length > 0 && total + term.df > CANDIDATE_BUDGET) break;
    chosen.push(term);
    total += term.df;
  }
  const fullQuery = terms.map((t) => quoteLexeme(t.lexeme)).join(' | ');
  const candidateQuery =
    chosen.length === 1 && chosen[0]!.df > CANDIDATE_BUDGET && terms.length >= 2
      ? `${quoteLexeme(terms[0]!.lexeme)} & ${quoteLexeme(terms[1]!.lexeme)}`
      : chosen.map((t) => quoteLexeme(t.lexeme)).join(' | ');
  return { candidateQuery, fullQuery };
}

/** The best `limit` passages of an assistant's ready documents for a question (empty when nothing matches). */
export async function retrievePassages(
  sql: Sql,
  assistant: { id: string; language: string },
  question: string,
  limit = 5,
): Promise<Passage[]> {
  const text = questionWords(question);
  if (text === '') return [];
  const plan = planQuery(await questionLexemes(sql, { assistantId: assistant.id, language: assistant.language, text }));
  if (!plan) return [];
  let rows = await rankPassages(sql, { assistantId: assistant.id, ...plan, candidateCap: CANDIDATE_CAP, limit });
  if (rows.length === 0 && plan.candidateQuery.includes('&')) {
    // No passage holds both common terms together: fall back to the rarest one alone.
    rows = await rankPassages(sql, {
      assistantId: assistant.id,
      candidateQuery: plan.candidateQuery.split(' & ')[0]!,
      fullQuery: plan.fullQuery,
      candidateCap: CANDIDATE_CAP,
      limit,
    });
  }
  return rows.map((r) => ({ ...r, score: Number(r.score) }));
}

/** A document an answer cites (stored in `sources` of chat messages and eval cases). */
export interface PassageSource {
  documentId: string;
  name: string;
  snippet: string;
  score: number;
}

/** The sources of an answer: one per document (the first, best ranked, of its passages), with a snippet and the score to 6 places. */
export function sourcesOf(passages: readonly Passage[], question: string): PassageSource[] {
  const seen = new Set<string>();
  const out: PassageSource[] = [];
  for (const p of passages) {
    if (seen.has(p.documentId)) continue;
    seen.add(p.documentId);
    out.push({
      documentId: p.documentId,
      name: p.documentName,
      snippet: snippetOf(p.content, question),
      score: Number(p.score.toFixed(6)),
    });
  }
  return out;
}

/**
 * A short excerpt of a passage around the first word of the question it contains (for `sources[].snippet`),
 * cut at word boundaries, without the passage's title lines.
 */
export function snippetOf(content: string, question: string, maxChars = 240): string {
  // A plain title line ("Kettle price list") is left out, not glued onto the first sentence.
  const text = withoutTitleLines(content).join(' ').replace(/\s+/g, ' ').trim();
  if (text.length <= maxChars) return text;
  const lower = text.toLowerCase();
  const words = (question.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).sort((a, b) => b.length - a.length);
  let at = -1;
  for (const w of words) {
    at = lower.indexOf(w.slice(0, Math.max(3, w.length - 2)));
    if (at >= 0) break;
  }
  let start = at < 0 ? 0 : Math.max(0, at - Math.floor(maxChars / 3));
  if (start > 0) {
    const space = text.indexOf(' ', start);
    start = space >= 0 && space < start + 20 ? space + 1 : start;
  }
  let end = Math.min(text.length, start + maxChars);
  if (end < text.length) {
    const space = text.lastIndexOf(' ', end);
    if (space > start + maxChars / 2) end = space;
  }
  return `${start > 0 ? '… ' : ''}${text.slice(start, end)}${end < text.length ? ' …' : ''}`;
}
