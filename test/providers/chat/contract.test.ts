import t from 'tap';
import { createLocalProvider, createOpenAiProvider } from '../../../src/providers/chat/index.js';
import { chatProviderContract } from './contract.js';
import { startChatSimulator } from './simulator.js';

chatProviderContract(t, 'local', async () => createLocalProvider());

chatProviderContract(t, 'openai (simulator)', async (t) => {
  const sim = await startChatSimulator(t);
  sim.script({ kind: 'stream', pieces: ['Within ', '30 ', 'days.'], delayMs: 5 });
  return createOpenAiProvider({ baseUrl: sim.baseUrl, apiKey: 'sk-test', model: 'sim-model', timeoutMs: 2000 });
});
