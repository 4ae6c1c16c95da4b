import type { Config } from '../config/index.js';
import type { Sql } from '../db/index.js';
import type { Logger } from '../log/index.js';
import type { SharedStore } from '../store/types.js';

/** Account status values (docs/design-decisions.md, Usage and plans). Only `active` accounts may use their API keys. */
export const ACCOUNT_STATUSES = ['active', 'suspended', 'disabled'] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** What the identity capability needs from Deps (a subset, so tests and the CLI can build it cheaply). */
export interface IdentityDeps {
  readonly config: Readonly<Config>;
  readonly log: Logger;
  readonly sql: Sql;
  readonly store: SharedStore;
}
