import type { Test } from 'tap';
import { randomBytes, randomInt } from 'node:crypto';
import { SCOPES, createApiKey } from '../../src/auth/index.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';
import { bearer, createOwner, login, type TestOwner } from '../helpers/identity.js';
import { PolarSimulator } from '../helpers/polar-simulator.js';
import { startChatSimulator } from '../providers/chat/simulator.js';

/** The allowed widget Origin of every world assistant. */
export const WIDGET_ORIGIN = 'https://shop.example';

/** One account with one of every resource a route can address (ids by resource type). */
export interface Tenant {
  name: string;
  owner: TestOwner;
  /** `parley_session=...` of the owner's dashboard session. */
  cookie: string;
  /** Resource type -> an id of that type the tenant owns (what path parameters are filled with). */
  ids: Record<ResourceType, string>;
  assistant: { id: string; publicId: string };
  /** The widget visitor who holds `widgetConversation`. */
  visitorId: string;
  apiConversationId: string;
  apiMessageId: string;
  widgetConversationId: string;
  widgetMessageId: string;
  voiceControlToken: string;
  /** API keys of this tenant by scope set: `all`, one per scope (`only:<scope>`), and `none` (no scope any route needs but chat). */
  keys: Record<string, string>;
}

/** Every kind of resource a path parameter can name. The matrix fails on a parameter it cannot map to one of these. */
export type ResourceType =
  | 'assistant'
  | 'publicAssistant'
  | 'document'
  | 'conversation'
  | 'key'
  | 'voiceSession'
  | 'eval'
  | 'account'
  | 'plan'
  | 'webhookEndpoint'
  | 'webhookDelivery'
  | 'visitor'
  | 'user'
  | 'phoneNumber'
  | 'tool'
  | 'call'
  | 'callBatch'
  | 'scenario'
  | 'scenarioRun';

export interface World {
  app: TestApp;
  a: Tenant;
  b: Tenant;
  /** A dashboard session of an operator listed in ADMIN_USER_IDS. */
  operatorCookie: string;
}

interface JsonAnswer {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function call(
  app: TestApp,
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<JsonAnswer> {
  const res = await fetch(`${app.url}${path}`, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body: parsed };
}

async function must(answer: Promise<JsonAnswer>, what: string, status = 200): Promise<any> {
  // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await answer;
  if (res.status !== status) throw new Error(`world setup: ${what} answered ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates one tenant through the public API (so everything exists as a user would have made it). */
export async function createTenant(app: TestApp, name: string): Promise<Tenant> {
  const sql = app.database.sql;
  const owner = await createOwner(sql, { name });
  // Pro: evals are enabled and the limits leave room for a fuzz run.
  await sql`update hosting_accounts set plan_code = 'pro' where account_id = ${owner.accountId}`;
  const cookie = await login(app.url, owner.email, owner.password);
  const key = bearer(owner.secret);
  const dash = { cookie, origin: app.url };
  const assistant = (
    await must(
      call(
        app,
        'POST',
        '/api/v1/assistants',
        {
          name: `${name} bot`,
          instructions: 'Answer from the documents.',
          settings: { allowedDomains: [WIDGET_ORIGIN], voice: { enabled: true, requireConsent: false } },
        },
        key,
      ),
      'create assistant',
      201,
    )
  ).assistant as { id: string; publicId: string };
  const document = (
    await must(
      call(
        app,
        'POST',
        `/api/assistants/${assistant.id}/sources`,
        {
          type: 'text',
          name: `${name} prices`,
          text: `The ${name} plan costs 4.99 euros per month. Support answers within one day.`,
        },
        dash,
      ),
      'add source',
      201,
    )
  ).document as { id: string };
  const visitorId = `visitor-${name}-0001`;
  const apiChat = await must(
    call(app, 'POST', '/api/v1/chat', { assistantId: assistant.id, message: 'How much does it cost?' }, key),
    'api chat',
  );
  const widgetChat = await must(
    call(
      app,
      'POST',
      '/api/v1/chat',
      { assistantId: assistant.publicId, message: 'Hello there', visitorId },
      { origin: WIDGET_ORIGIN },
    ),
    'widget chat',
  );
  const extraKey = (await must(
    call(app, 'POST', '/api/account/keys', { name: `${name} extra`, scopes: ['chat'] }, dash),
    'create key',
    201,
  )) as { key?: { id: string }; id?: string };
  const keyId = extraKey.key?.id ?? extraKey.id;
  if (typeof keyId !== 'string') throw new Error(`world setup: create key answered ${JSON.stringify(extraKey)}`);
  const minted = await must(
    call(
      app,
      'POST',
      '/api/v1/voice/sessions',
      { assistantId: assistant.publicId, capabilities: ['heartbeat', 'playback_gate'] },
      key,
    ),
    'voice mint',
  );
  const evalRun = (await must(
    call(
      app,
      'POST',
      `/api/assistants/${assistant.id}/evals`,
      { cases: [{ question: 'How much?', expected: '4.99 euros' }] },
      dash,
    ),
    'eval',
    202,
  )) as {
    eval: { id: string };
  };
  // A webhook endpoint on a public address literal (no DNS; tests reach no outside address, so its deliveries stay
  // pending) and one delivery of it, from a test event.
  const endpoint = await must(
    call(
      app,
      'POST',
      '/api/v1/webhook-endpoints',
      { url: 'https://93.184.215.14/parley', events: ['document.processed'] },
      key,
    ),
    'create webhook endpoint',
    201,
  );
  const testEvent = await must(
    call(app, 'POST', `/api/v1/webhook-endpoints/${endpoint.id}/test`, undefined, key),
    'test event',
    202,
  );
  // A phone number answered by the assistant (the carrier credentials are made up: nothing calls the carrier).
  const phoneNumber = await must(
    call(
      app,
      'POST',
      '/api/v1/phone-numbers',
      {
        phoneNumber: `+1555${String(randomInt(1_000_000, 9_999_999))}`,
        assistantId: assistant.id,
        provider: 'twilio',
        accountSid: `AC${randomBytes(16).toString('hex')}`,
        authToken: randomBytes(16).toString('hex'),
      },
      key,
    ),
    'create phone number',
    201,
  );
  // A tool of the assistant on a public address literal (nothing calls it: the fuzz cases never chat with tools).
  const tool = (await must(
    call(
      app,
      'POST',
      `/api/v1/assistants/${assistant.id}/tools`,
      {
        name: 'order_status',
        description: 'Looks up an order.',
        parameters: { type: 'object', properties: { orderId: { type: 'string' } }, required: ['orderId'] },
        url: 'https://93.184.215.14/tools/order-status',
      },
      key,
    ),
    'create tool',
    201,
  )) as { tool: { id: string } };
  // A call placed from that number, stored as the carrier left it (nothing calls a carrier in the fuzz run).
  const callId = `call_${randomBytes(12).toString('hex')}`;
  await app.database.sql`
    insert into outbound_calls (id, account_id, assistant_id, phone_number_id, to_number, from_number, status, public_base)
    select ${callId}, ${owner.accountId}, a.id, ${phoneNumber.id}, '+15557000001', ${phoneNumber.phoneNumber}, 'completed',
      ${app.url}
    from assistants a where a.id::text = ${assistant.id} or a.public_id = ${assistant.id}`;
  // A paused batch from that number, stored as the API leaves it (the worker never dials a paused batch).
  const batch = { id: `cb_${randomBytes(12).toString('hex')}` };
  await app.database.sql`
    insert into call_batches (id, account_id, assistant_id, phone_number_id, from_number, status, max_concurrent, retry,
      public_base, total)
    select ${batch.id}, ${owner.accountId}, a.id, ${phoneNumber.id}, ${phoneNumber.phoneNumber}, 'paused', 1,
      '{"onNoAnswer":false,"onBusy":false,"attempts":1,"afterMinutes":60}'::jsonb, ${app.url}, 0
    from assistants a where a.id::text = ${assistant.id} or a.public_id = ${assistant.id}`;
  // A chat scenario and one run of it.
  const scenario = (await must(
    call(
      app,
      'POST',
      `/api/v1/assistants/${assistant.id}/scenarios`,
      { name: 'price', transport: 'chat', turns: [{ say: 'How much is it?' }], expect: [{ mustSay: 'euros' }] },
      key,
    ),
    'create scenario',
    201,
  )) as { scenario: { id: string } };
  const scenarioRun = (await must(
    call(app, 'POST', `/api/v1/assistants/${assistant.id}/scenario-runs`, {}, key),
    'run scenarios',
    202,
  )) as { run: { id: string } };
  return {
    name,
    owner,
    cookie,
    assistant,
    visitorId,
    apiConversationId: apiChat.conversationId,
    apiMessageId: apiChat.messageId,
    widgetConversationId: widgetChat.conversationId,
    widgetMessageId: widgetChat.messageId,
    voiceControlToken: minted.controlToken,
    ids: {
      assistant: assistant.id,
      publicAssistant: assistant.publicId,
      document: document.id,
      conversation: apiChat.conversationId,
      key: keyId,
      voiceSession: minted.sessionId,
      eval: evalRun.eval.id,
      account: owner.accountId,
      // Tenants are on pro; the plan a path names is another one, so an operator's edit never starves the tenants.
      plan: 'starter',
      webhookEndpoint: endpoint.id,
      webhookDelivery: testEvent.delivery.id,
      visitor: visitorId,
      user: owner.userId,
      phoneNumber: phoneNumber.id,
      tool: tool.tool.id,
      call: callId,
      callBatch: batch.id,
      scenario: scenario.scenario.id,
      scenarioRun: scenarioRun.run.id,
    },
    keys: await tenantKeys(app, owner),
  };
}

async function tenantKeys(app: TestApp, owner: TestOwner): Promise<Record<string, string>> {
  const keys: Record<string, string> = { all: owner.secret };
  for (const scope of SCOPES) {
    keys[`only:${scope}`] = (
      await createApiKey(app.database.sql, {
        accountId: owner.accountId,
        userId: owner.userId,
        name: `only ${scope}`,
        scopes: [scope],
      })
    ).secret;
  }
  return keys;
}

/**
 * The whole service over its own database, with two tenants and an operator. Rate limits are raised so a fuzz
 * run measures input handling, not the limiter; `env` overrides anything.
 */
export async function createWorld(t: Test, env: Record<string, string> = {}): Promise<World> {
  const database = await createTestDatabase(t);
  const operator = await createOwner(database.sql, { name: 'operator' });
  // Billing configured against the Polar simulator, so billing routes answer as in production, not 503 "not configured".
  const polar = await PolarSimulator.start(t);
  // Every chat provider an owner can select is configured (an OpenAI-compatible simulator on loopback), so a fuzzed
  // settings change to `openai` does not turn chat into the documented 503 CHAT_PROVIDER_NOT_CONFIGURED.
  const openai = await startChatSimulator(t);
  const app = await startTestApp(t, {
    database,
    env: {
      ADMIN_USER_IDS: operator.userId,
      API_RATE_LIMIT_PER_MINUTE: '1000000',
      WIDGET_RATE_LIMIT_PER_VISITOR_PER_MINUTE: '1000000',
      WIDGET_RATE_LIMIT_PER_ASSISTANT_PER_MINUTE: '1000000',
      ...polar.billingEnv({
        starter: polar.addProduct('Starter'),
        pro: polar.addProduct('Pro'),
        business: polar.addProduct('Business'),
      }),
      OPENAI_BASE_URL: openai.baseUrl,
      OPENAI_API_KEY: 'sk-fuzz-upstream',
      ...env,
    },
  });
  polar.webhookUrl = `${app.url}/api/webhooks/polar`;
  const a = await createTenant(app, 'alpha');
  const b = await createTenant(app, 'bravo');
  const operatorCookie = await login(app.url, operator.email, operator.password);
  return { app, a, b, operatorCookie };
}
