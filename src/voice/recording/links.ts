import type { Sql, TransactionSql } from '../../db/index.js';
import * as rq from './queries.js';
import type { VoiceRecordings } from './recordings.js';
import { signedRecordingPath, type RecordingLinkSigner } from './signed-link.js';

/** One host name or IP literal with an optional port (RFC 9110, 7.2): a Host header a link may be built on. */
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,253}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

export interface SignedRecordingLink {
  url: string;
  expiresAt: string;
}

/**
 * Absolute signed links to recordings: under PUBLIC_URL when set (the operator's word); else the request's Host
 * when it is one plain host[:port]; else this listener's address.
 */
export class RecordingLinks {
  constructor(
    private readonly recordings: Pick<VoiceRecordings, 'exists' | 'isWriting'>,
    private readonly signer: RecordingLinkSigner,
    private readonly base: { publicUrl: string | undefined; host: string; port: number; maxTtlSeconds: number },
  ) {}

  linkOf(sessionId: string, ttlSeconds: number, host?: string): SignedRecordingLink {
    const expires = Math.floor(Date.now() / 1000) + Math.min(ttlSeconds, this.base.maxTtlSeconds);
    const origin =
      this.base.publicUrl !== undefined
        ? this.base.publicUrl.replace(/\/+$/, '')
        : host !== undefined && HOST_HEADER.test(host)
          ? `http://${host}`
          : `http://${this.base.host}:${this.base.port}`;
    return {
      url: `${origin}${signedRecordingPath(sessionId)}?${this.signer.query(sessionId, expires)}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  /**
   * The link to a conversation's last recorded call (an end-of-call report's recordingUrl), or null when it has no
   * recording (none consented, or nothing was heard). A recording still being built or stored here counts, and so
   * does one the store cannot be asked about right now: a consented call's link is given rather than lost.
   */
  async ofConversation(sql: Sql | TransactionSql, conversationId: string): Promise<SignedRecordingLink | null> {
    const session = await rq.lastRecordedSessionOf(sql, conversationId);
    if (session === undefined) return null;
    const present =
      this.recordings.isWriting(session.id) || (await this.recordings.exists(session.id).catch(() => true));
    return present ? this.linkOf(session.id, this.base.maxTtlSeconds) : null;
  }
}
