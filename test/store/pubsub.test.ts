import t, { type Test } from 'tap';
import { MemoryStore, type SharedStore } from '../../src/store/index.js';
import type { Subscription } from '../../src/store/types.js';
import { createTestRedisStore, uniquePrefix } from '../helpers/store.js';
import { waitFor as until } from '../helpers/wait.js';

async function contract(
  t: Test,
  make: () => Promise<{ publisher: SharedStore; subscriber: SharedStore; stranger: SharedStore }>,
) {
  const { publisher, subscriber, stranger } = await make();
  const got: string[] = [];
  const strangerGot: string[] = [];
  let gaps = 0;
  const sub: Subscription = subscriber.subscribe!('chan', { message: (m) => got.push(m), gap: () => gaps++ });
  const other = stranger.subscribe!('chan', { message: (m) => strangerGot.push(m), gap: () => undefined });
  await until(() => sub.live && other.live, 'the subscriptions to be live');
  t.ok(gaps >= 1, 'a listener is told about the gap before it is live (drop caches)');
  await publisher.publish!('chan', 'key_1,key_2');
  await until(() => got.length === 1, 'the message');
  t.same(got, ['key_1,key_2'], 'delivered to a subscriber of the same deployment');
  await sub.close();
  await publisher.publish!('chan', 'after-close');
  await new Promise((resolve) => setTimeout(resolve, 50));
  t.same(got, ['key_1,key_2'], 'nothing after close');
  t.same(strangerGot, [], 'another deployment (key prefix) never sees the channel');
  await other.close();
}

t.test('memory: in-process delivery', async (t) => {
  const store = new MemoryStore();
  const stranger = new MemoryStore();
  t.teardown(async () => {
    await store.close();
    await stranger.close();
  });
  await contract(t, async () => ({ publisher: store, subscriber: store, stranger }));
});

t.test('redis: across connections, scoped by the key prefix', async (t) => {
  const prefix = uniquePrefix('pubsub');
  await contract(t, async () => ({
    publisher: await createTestRedisStore(t, prefix),
    subscriber: await createTestRedisStore(t, prefix),
    stranger: await createTestRedisStore(t, uniquePrefix('pubsub-other')),
  }));
});
