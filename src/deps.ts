import type { Config } from './config/index.js';
import { openDatabase } from './db/index.js';
import type { Sql } from './db/types.js';
import type { Logger } from './log/index.js';
import { createChatProviders, type ChatProviders } from './providers/chat/index.js';
import {
  createLocalVoiceProvider,
  createVoiceProvider,
  findLocalVoiceEngines,
  startVoiceSimulator,
  type VoiceProvider,
} from './providers/voice/index.js';
import { createStore } from './store/index.js';
import type { SharedStore } from './store/types.js';

/** The I/O clients, created in order and closed in reverse. Passed down; never module singletons. */
export interface Deps {
  readonly config: Readonly<Config>;
  readonly log: Logger;
  readonly sql: Sql;
  readonly store: SharedStore;
  /** True when running on the embedded PostgreSQL (no DATABASE_URL). */
  readonly embeddedDatabase: boolean;
  /** The voice provider; absent when none is configured (voice mints answer 503). */
  readonly voiceProvider?: VoiceProvider | undefined;
  /** Set when voice fell back to the simulator because the local engines are missing: shown in /readyz. */
  readonly voiceNote?: string | undefined;
  /** The chat providers (chat, evals and grounding share them); built here once. */
  readonly chatProviders?: ChatProviders | undefined;
  close(): Promise<void>;
}

export async function createDeps(config: Readonly<Config>, log: Logger): Promise<Deps> {
  const closers: Array<{ name: string; close: () => Promise<void> }> = [];
  const closeAll = async () => {
    for (const { name, close } of closers.reverse().splice(0)) {
      try {
        await close();
      } catch (err) {
        log.error({ err, dependency: name }, 'closing a dependency failed');
      }
    }
  };
  try {
    const database = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolSize: config.DATABASE_POOL_SIZE,
      queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
      log,
    });
    closers.push({ name: 'database', close: () => database.close() });
    const store = await createStore({
      redisUrl: config.REDIS_URL,
      prefix: config.REDIS_KEY_PREFIX,
      commandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
      log,
    });
    closers.push({ name: 'store', close: () => store.close() });
    const { provider: voiceProvider, note: voiceNote } = await openVoiceProvider(config, log, closers);
    log.info(
      {
        database: database.embedded ? 'embedded' : 'external',
        store: store.kind,
        voiceProvider: voiceProvider?.kind ?? 'none',
      },
      'dependencies ready',
    );
    return {
      config,
      log,
      sql: database.sql,
      store,
      embeddedDatabase: database.embedded,
      voiceProvider,
      voiceNote,
      chatProviders: createChatProviders(config),
      close: closeAll,
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/** Shown at start-up, in /readyz and by the playground when `auto` found no local engines. */
export const SIMULATED_VOICE_NOTE =
  'voice is simulated: it does not understand speech; install pocketsphinx, pocketsphinx-en-us and espeak-ng ' +
  '(Debian packages) for the offline voice, or set VOICE_PROVIDER';

/**
 * VOICE_PROVIDER=auto (the default) is `local` when its engines are installed and the simulator otherwise, said once
 * at start-up; tests (NODE_ENV=test) always get the simulator, whose determinism they need. The simulator without
 * VOICE_PROVIDER_URL starts in-process on loopback; with a URL it talks to that simulator. gpt-live needs
 * VOICE_PROVIDER_URL and VOICE_PROVIDER_API_KEY; without them voice is off (mints answer 503) and the rest runs.
 */
async function openVoiceProvider(
  config: Readonly<Config>,
  log: Logger,
  closers: Array<{ name: string; close: () => Promise<void> }>,
): Promise<{ provider: VoiceProvider | undefined; note?: string | undefined }> {
  const logger = log.child({ component: 'voice-provider' });
  if (config.VOICE_PROVIDER === 'gpt-live') {
    if (config.VOICE_PROVIDER_URL === undefined || config.VOICE_PROVIDER_API_KEY === undefined) {
      log.warn('VOICE_PROVIDER=gpt-live needs VOICE_PROVIDER_URL and VOICE_PROVIDER_API_KEY; voice is off');
      return { provider: undefined };
    }
    return {
      provider: createVoiceProvider({
        kind: 'gpt-live',
        url: config.VOICE_PROVIDER_URL,
        apiKey: config.VOICE_PROVIDER_API_KEY,
        model: config.VOICE_MODEL,
        appendMs: config.VOICE_PROVIDER_APPEND_MS,
        logger,
      }),
    };
  }
  let note: string | undefined;
  const wantsLocal =
    config.VOICE_PROVIDER === 'local' || (config.VOICE_PROVIDER === 'auto' && config.NODE_ENV !== 'test');
  if (wantsLocal) {
    const found = findLocalVoiceEngines(config.VOICE_LOCAL_ENGINES_PATH);
    if (found.engines !== undefined)
      return { provider: createLocalVoiceProvider({ kind: 'local', engines: found.engines, logger }) };
    if (config.VOICE_PROVIDER === 'local') {
      log.warn({ missing: found.missing }, 'VOICE_PROVIDER=local needs its engines installed; voice is off');
      return { provider: undefined };
    }
    note = SIMULATED_VOICE_NOTE;
    log.warn({ missing: found.missing }, SIMULATED_VOICE_NOTE);
  }
  let url = config.VOICE_PROVIDER_URL;
  if (url === undefined) {
    const simulator = await startVoiceSimulator();
    closers.push({ name: 'voice simulator', close: () => simulator.close() });
    url = simulator.url;
  }
  const provider = createVoiceProvider({
    kind: 'simulator',
    url,
    model: config.VOICE_MODEL,
    appendMs: config.VOICE_PROVIDER_APPEND_MS,
    logger,
    ...(config.VOICE_PROVIDER_API_KEY !== undefined ? { apiKey: config.VOICE_PROVIDER_API_KEY } : {}),
  });
  return { provider, note };
}
