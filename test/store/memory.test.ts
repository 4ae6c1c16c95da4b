import t from 'tap';
import { MemoryStore } from '../../src/store/memory.js';
import { sleepAtLeast } from '../helpers/store.js';
import { storeContract } from './contract.js';

t.test('contract with an injected clock', async (t) => {
  let now = 1_700_000_000_000;
  storeContract(t, {
    exactClock: true,
    async create(t) {
      const store = new MemoryStore({ now: () => now });
      t.teardown(() => store.close());
      return store;
    },
    async advance(ms) {
      now += ms;
    },
  });
});

t.test('contract on the real clock', async (t) => {
  storeContract(t, {
    exactClock: false,
    async create(t) {
      const store = new MemoryStore();
      t.teardown(() => store.close());
      return store;
    },
    advance: sleepAtLeast,
  });
});

t.test('expired keys are swept even when never read again', async (t) => {
  let now = 0;
  const store = new MemoryStore({ now: () => now, sweepIntervalMs: 10 });
  t.teardown(() => store.close());
  await store.set('a', '1', { ttlMs: 100 });
  await store.set('b', '1');
  now = 200;
  await sleepAtLeast(30);
  t.equal(store.size, 1, 'the expired key is gone, the other stays');
});
