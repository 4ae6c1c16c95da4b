/** Chat providers behind one interface: `openai` (OpenAI-compatible, streaming) and `local` (offline, extractive). */
import type { Config } from '../../config/index.js';
import { createLocalProvider } from './local.js';
import { createOpenAiProvider } from './openai.js';
import type { ChatProvider } from './types.js';

export * from './types.js';
export {
  createLocalProvider,
  composeExtractiveAnswer,
  LOCAL_LABEL,
  LOCAL_NO_ANSWER,
  VOICE_UNAVAILABLE_NOTE,
  withoutTitleLines,
} from './local.js';
export { createOpenAiProvider, type OpenAiProviderOptions } from './openai.js';
export { SseDataReader } from './sse-lines.js';

export type ChatProviderName = ChatProvider['name'];

/** The providers a deployment has configured; `get` answers undefined for one that is not. */
export interface ChatProviders {
  readonly defaultName: ChatProviderName;
  get(name: ChatProviderName): ChatProvider | undefined;
}

/**
 * `local` always exists. `openai` exists when OPENAI_API_KEY or OPENAI_BASE_URL is set (a self-hosted
 * OpenAI-compatible server may need no key); the base URL defaults to https://api.openai.com/v1.
 * Creating providers does no I/O.
 */
export function createChatProviders(
  config: Pick<Config, 'CHAT_PROVIDER' | 'OPENAI_BASE_URL' | 'OPENAI_API_KEY' | 'OPENAI_MODEL' | 'OPENAI_TIMEOUT_MS'>,
): ChatProviders {
  const local = createLocalProvider();
  let openai: ChatProvider | undefined;
  const openaiConfigured = config.OPENAI_API_KEY !== undefined || config.OPENAI_BASE_URL !== undefined;
  return {
    defaultName: config.CHAT_PROVIDER,
    get(name) {
      if (name === 'local') return local;
      if (!openaiConfigured) return undefined;
      openai ??= createOpenAiProvider({
        baseUrl: config.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        apiKey: config.OPENAI_API_KEY,
        model: config.OPENAI_MODEL,
        timeoutMs: config.OPENAI_TIMEOUT_MS,
      });
      return openai;
    },
  };
}
export { slotsOf } from './tool-examples.js';
export { localToolStep, type LocalToolStep } from './local-tools.js';
