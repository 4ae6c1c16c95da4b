import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { signWebhook, signingKeys } from '../../src/billing/index.js';

/**
 * A local stand-in for the Polar API and its webhook sender: a real HTTP server on 127.0.0.1:0 answering the two
 * calls Parley makes (POST /v1/checkouts/, POST /v1/customer-sessions/), and a sender that delivers subscription
 * events signed the way Polar does (Standard Webhooks: webhook-id, webhook-timestamp, `v1,<base64 HMAC-SHA256>`).
 * Subscription timestamps run on the simulator's own clock, one second per change, so event order is explicit.
 */
export interface SimSubscription {
  id: string;
  created_at: string;
  modified_at: string | null;
  status: string;
  amount: number;
  currency: string;
  recurring_interval: 'month';
  current_period_start: string;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  started_at: string | null;
  ends_at: string | null;
  ended_at: string | null;
  customer_id: string;
  product_id: string;
  checkout_id: string | null;
  metadata: Record<string, string>;
  customer: { id: string; external_id: string | null; email: string; metadata: Record<string, string> };
  product: { id: string; name: string };
}

export interface SimEvent {
  webhookId: string;
  type: string;
  /** The exact JSON bytes delivered (a redelivery re-signs these with a fresh timestamp, like Polar does). */
  body: string;
}

interface SimCheckout {
  id: string;
  productId: string;
  externalCustomerId: string | null;
  metadata: Record<string, string>;
  successUrl: string | null;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}

export class PolarSimulator {
  readonly accessToken: string;
  /** `whsec_` + base64 key (Standard Webhooks). */
  readonly webhookSecret: string;
  readonly products = new Map<string, { id: string; name: string; amount: number }>();
  readonly checkouts = new Map<string, SimCheckout>();
  readonly subscriptions = new Map<string, SimSubscription>();
  readonly customers = new Map<string, { id: string; externalId: string }>();
  readonly requests: RecordedRequest[] = [];
  readonly events: SimEvent[] = [];
  /** Where events are delivered (Parley's /api/webhooks/polar). */
  webhookUrl: string | undefined;
  url = '';
  #server: Server | undefined;
  #clockMs: number;

  constructor(options: { accessToken?: string; webhookSecret?: string; start?: Date } = {}) {
    this.accessToken = options.accessToken ?? `polar_oat_${randomBytes(16).toString('hex')}`;
    this.webhookSecret = options.webhookSecret ?? `whsec_${randomBytes(24).toString('base64')}`;
    this.#clockMs = (options.start ?? new Date()).getTime();
  }

  static async start(t: Test, options: ConstructorParameters<typeof PolarSimulator>[0] = {}): Promise<PolarSimulator> {
    const sim = new PolarSimulator(options);
    await sim.listen();
    t.teardown(() => sim.close());
    return sim;
  }

  addProduct(name: string, amount = 1200): string {
    const id = randomUUID();
    this.products.set(id, { id, name, amount });
    return id;
  }

  /**
   * The billing env of a test app that talks to this simulator: its token, webhook secret and address, and
   * `BILLING_PRODUCT_ID_<PLAN>` for each plan given a product (from addProduct).
   */
  billingEnv(products: Partial<Record<'starter' | 'pro' | 'business', string>>): Record<string, string> {
    const env: Record<string, string> = {
      BILLING_ACCESS_TOKEN: this.accessToken,
      BILLING_WEBHOOK_SECRET: this.webhookSecret,
      BILLING_API_BASE_URL: this.url,
    };
    for (const [plan, id] of Object.entries(products))
      if (id !== undefined) env[`BILLING_PRODUCT_ID_${plan.toUpperCase()}`] = id;
    return env;
  }

  async listen(): Promise<void> {
    this.#server = createServer((req, res) => void this.#handle(req, res));
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  /** The simulator's clock (subscription timestamps), advanced by every change. */
  tick(ms = 1000): Date {
    this.#clockMs += ms;
    return new Date(this.#clockMs);
  }

  // ---- The customer completes a checkout: subscription.created + subscription.active ----

  completeCheckout(checkoutId: string, email = 'buyer@example.test'): SimSubscription {
    const checkout = this.checkouts.get(checkoutId);
    if (!checkout) throw new Error(`no checkout ${checkoutId}`);
    const product = this.products.get(checkout.productId)!;
    const externalId = checkout.externalCustomerId;
    let customer = externalId ? this.customers.get(externalId) : undefined;
    if (!customer) {
      customer = { id: randomUUID(), externalId: externalId ?? '' };
      if (externalId) this.customers.set(externalId, customer);
    }
    const start = this.tick();
    const sub: SimSubscription = {
      id: randomUUID(),
      created_at: start.toISOString(),
      modified_at: null,
      status: 'incomplete',
      amount: product.amount,
      currency: 'usd',
      recurring_interval: 'month',
      current_period_start: start.toISOString(),
      current_period_end: addMonth(start).toISOString(),
      cancel_at_period_end: false,
      canceled_at: null,
      started_at: null,
      ends_at: null,
      ended_at: null,
      customer_id: customer.id,
      product_id: product.id,
      checkout_id: checkout.id,
      metadata: { ...checkout.metadata },
      customer: { id: customer.id, external_id: externalId, email, metadata: {} },
      product: { id: product.id, name: product.name },
    };
    this.subscriptions.set(sub.id, sub);
    this.#emit('subscription.created', sub);
    this.#change(sub, { status: 'active', started_at: start.toISOString() });
    this.#emit('subscription.active', sub);
    return sub;
  }

  /** The period renews (subscription.updated with the next period). */
  renew(subId: string): void {
    const sub = this.#sub(subId);
    const start = new Date(sub.current_period_end!);
    this.#change(sub, { current_period_start: start.toISOString(), current_period_end: addMonth(start).toISOString() });
    this.#emit('subscription.updated', sub);
  }

  /** Cancel at period end: still active until revoked (subscription.canceled). */
  cancel(subId: string): void {
    const sub = this.#sub(subId);
    const at = this.tick(0);
    this.#change(sub, { cancel_at_period_end: true, canceled_at: at.toISOString(), ends_at: sub.current_period_end });
    this.#emit('subscription.canceled', sub);
  }

  uncancel(subId: string): void {
    const sub = this.#sub(subId);
    this.#change(sub, { cancel_at_period_end: false, canceled_at: null, ends_at: null });
    this.#emit('subscription.uncanceled', sub);
  }

  /** A status change reported as subscription.updated (e.g. past_due, trialing). */
  setStatus(subId: string, status: string): void {
    const sub = this.#sub(subId);
    this.#change(sub, { status });
    this.#emit('subscription.updated', sub);
  }

  /** The subscription ends (subscription.revoked, status canceled). */
  revoke(subId: string): void {
    const sub = this.#sub(subId);
    const at = this.tick(0);
    this.#change(sub, { status: 'canceled', ended_at: at.toISOString() });
    this.#emit('subscription.revoked', sub);
  }

  /** Any other event kind Parley does not act on (e.g. order.paid). */
  emitOther(type: string, data: Record<string, unknown>): SimEvent {
    return this.#push(type, data);
  }

  // ---- Delivery ----

  /**
   * Delivers an event to `url` (default webhookUrl), signed now (or at `timestampSeconds`). `sign` picks the key:
   * the Standard Webhooks base64 key (default), the secret's raw bytes (older Polar secrets), or a wrong key.
   */
  async deliver(
    event: SimEvent,
    options: {
      url?: string;
      timestampSeconds?: number;
      sign?: 'standard' | 'raw' | 'wrong';
      extraSignatures?: string[];
      body?: string;
    } = {},
  ): Promise<Response> {
    const url = options.url ?? this.webhookUrl;
    if (!url) throw new Error('no webhook url');
    const timestamp = String(options.timestampSeconds ?? Math.floor(Date.now() / 1000));
    const [standardKey, rawKey] = signingKeys(this.webhookSecret);
    const key = options.sign === 'raw' ? rawKey! : options.sign === 'wrong' ? randomBytes(24) : standardKey!;
    const signature = [
      ...(options.extraSignatures ?? []),
      signWebhook(key, event.webhookId, timestamp, event.body),
    ].join(' ');
    return fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'webhook-id': event.webhookId,
        'webhook-timestamp': timestamp,
        'webhook-signature': signature,
      },
      body: options.body ?? event.body,
    });
  }

  /** Delivers every recorded event once, in order; returns the statuses. */
  async deliverAll(events: readonly SimEvent[] = this.events): Promise<number[]> {
    const statuses: number[] = [];
    for (const event of events) {
      const res = await this.deliver(event);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    return statuses;
  }

  #sub(id: string): SimSubscription {
    const sub = this.subscriptions.get(id);
    if (!sub) throw new Error(`no subscription ${id}`);
    return sub;
  }

  #change(sub: SimSubscription, patch: Partial<SimSubscription>): void {
    Object.assign(sub, patch, { modified_at: this.tick().toISOString() });
  }

  #emit(type: string, sub: SimSubscription): SimEvent {
    return this.#push(type, structuredClone(sub) as unknown as Record<string, unknown>);
  }

  #push(type: string, data: Record<string, unknown>): SimEvent {
    const event: SimEvent = {
      webhookId: `msg_${randomBytes(12).toString('hex')}`,
      type,
      body: JSON.stringify({ type, timestamp: new Date(this.#clockMs).toISOString(), data }),
    };
    this.events.push(event);
    return event;
  }

  // ---- The API ----

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { detail: 'invalid json' });
    }
    const path = (req.url ?? '/').split('?')[0]!;
    this.requests.push({ method: req.method ?? 'GET', path, authorization: req.headers.authorization, body });
    if (req.headers.authorization !== `Bearer ${this.accessToken}`) return send(res, 401, { error: 'invalid_token' });
    if (req.method === 'POST' && path === '/v1/checkouts/') {
      const products = body['products'];
      const productId = Array.isArray(products) ? products[0] : undefined;
      if (typeof productId !== 'string' || !this.products.has(productId))
        return send(res, 422, { detail: [{ loc: ['body', 'products'], msg: 'Product does not exist.' }] });
      const id = randomUUID();
      const externalCustomerId = typeof body['external_customer_id'] === 'string' ? body['external_customer_id'] : null;
      const metadata = (body['metadata'] ?? {}) as Record<string, string>;
      this.checkouts.set(id, {
        id,
        productId,
        externalCustomerId,
        metadata,
        successUrl: (body['success_url'] as string | undefined) ?? null,
      });
      return send(res, 201, {
        id,
        status: 'open',
        url: `${this.url}/checkout/polar_c_${id}`,
        client_secret: `polar_c_${id}`,
        product_id: productId,
        external_customer_id: externalCustomerId,
        metadata,
        expires_at: new Date(Date.now() + 3600_000).toISOString(),
      });
    }
    if (req.method === 'POST' && path === '/v1/customer-sessions/') {
      const externalId = body['external_customer_id'];
      const customer = typeof externalId === 'string' ? this.customers.get(externalId) : undefined;
      if (!customer) return send(res, 404, { error: 'ResourceNotFound', detail: 'Customer not found' });
      const token = `polar_cst_${randomBytes(12).toString('hex')}`;
      return send(res, 201, {
        id: randomUUID(),
        token,
        customer_id: customer.id,
        customer_portal_url: `${this.url}/portal?customer_session_token=${token}`,
      });
    }
    send(res, 404, { detail: 'Not Found' });
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function addMonth(d: Date): Date {
  const out = new Date(d);
  out.setUTCMonth(out.getUTCMonth() + 1);
  return out;
}
