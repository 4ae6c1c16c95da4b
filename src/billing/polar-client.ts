import { request } from 'undici';
import { billingErrors } from './errors.js';

/** Polar API bases (BILLING_SERVER; BILLING_API_BASE_URL overrides both, e.g. for the test simulator). */
export const POLAR_API_BASES = { production: 'https://api.polar.sh', sandbox: 'https://sandbox-api.polar.sh' } as const;

export interface PolarClientOptions {
  /** BILLING_ACCESS_TOKEN: sent only as the Authorization header to the Polar API; never logged or returned. */
  accessToken: string;
  baseUrl: string;
  timeoutMs?: number;
}

/**
 * The two Polar calls Parley makes, over undici. Answers other than 2xx become BILLING_PROVIDER_ERROR (502)
 * carrying only the provider's status, never its body (which could echo request data).
 */
export class PolarClient {
  readonly #token: string;
  readonly #base: string;
  readonly #timeoutMs: number;

  constructor(options: PolarClientOptions) {
    this.#token = options.accessToken;
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** POST /v1/checkouts/: a hosted checkout for one product, tied to the account (external id + metadata). */
  async createCheckout(
    input: {
      productId: string;
      accountId: string;
      customerEmail?: string | undefined;
      successUrl?: string | undefined;
    },
    signal?: AbortSignal,
  ): Promise<{ id: string; url: string }> {
    const body = await this.#post(
      '/v1/checkouts/',
      {
        products: [input.productId],
        external_customer_id: input.accountId,
        metadata: { hosting_account_id: input.accountId },
        ...(input.customerEmail ? { customer_email: input.customerEmail } : {}),
        ...(input.successUrl ? { success_url: input.successUrl } : {}),
      },
      signal,
    );
    if (typeof body['url'] !== 'string' || typeof body['id'] !== 'string') throw billingErrors.providerError();
    return { id: body['id'], url: body['url'] };
  }

  /** POST /v1/customer-sessions/: a customer portal link for the customer whose external id is the account id. */
  async createPortalSession(
    input: { accountId: string; returnUrl?: string | undefined },
    signal?: AbortSignal,
  ): Promise<{ url: string }> {
    const body = await this.#post(
      '/v1/customer-sessions/',
      {
        external_customer_id: input.accountId,
        ...(input.returnUrl ? { return_url: input.returnUrl } : {}),
      },
      signal,
      { 404: billingErrors.noCustomer, 422: billingErrors.noCustomer },
    );
    if (typeof body['customer_portal_url'] !== 'string') throw billingErrors.providerError();
    return { url: body['customer_portal_url'] };
  }

  async #post(
    path: string,
    payload: unknown,
    signal?: AbortSignal,
    mapped: Record<number, () => Error> = {},
  ): Promise<Record<string, unknown>> {
    let res;
    try {
      res = await request(`${this.#base}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${this.#token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(payload),
        headersTimeout: this.#timeoutMs,
        bodyTimeout: this.#timeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch {
      throw billingErrors.providerError();
    }
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const known = mapped[res.statusCode];
      throw known ? known() : billingErrors.providerError(res.statusCode);
    }
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object') return parsed as Record<string, unknown>;
    } catch {
      // fall through
    }
    throw billingErrors.providerError(res.statusCode);
  }
}
