import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app-context';
import { DomainError } from '../shared/errors';
import { PayloadDecryptionError } from '../crypto/payload-decryptor';
import { SUPPORTED_COUNTRIES } from '../shared/countries';
import { OrderStatus, type Order } from '../orders/order.entity';
import { merchantRedirect, type AuthenticationProof } from '../payments/payment.service';
import type { PaymentLink } from '../links/payment-link.entity';
import { paymentLinkPath } from '../links/payment-link-url';
import { browserClientScript, forgeScriptPath } from './browser-client';
import { escapeHtml, formatAmount, page } from './html';

const PUBLIC_DIR = path.join(__dirname, 'public');
const publicFile = (name: string) => {
  const candidates = [path.join(PUBLIC_DIR, name), path.join(__dirname, '..', '..', '..', 'src', 'checkout', 'public', name)];
  return fs.readFileSync(
    candidates.find((c) => fs.existsSync(c))!,
    'utf8',
  );
};

/** Hosted pages: payment link page, sandbox 3-D Secure and PayPal pages, result page. Adapters over the payment services. */
export async function registerCheckoutPages(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { links, payments, linkCheckout, merchants, merchantReturns } = ctx.services;
  const assets = {
    'checkout.css': { type: 'text/css; charset=utf-8', body: publicFile('checkout.css') },
    'checkout.js': { type: 'text/javascript; charset=utf-8', body: publicFile('checkout.js') },
    'pgw-client.js': { type: 'text/javascript; charset=utf-8', body: browserClientScript() },
    'forge.min.js': { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(forgeScriptPath(), 'utf8') },
  } as const;

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
  });

  app.get<{ Params: { name: keyof typeof assets } }>('/checkout-assets/:name', async (request, reply) => {
    // Own names only: `__proto__`, `constructor`, `toString` are not assets.
    const asset = Object.hasOwn(assets, request.params.name) ? assets[request.params.name] : undefined;
    if (!asset) return reply.code(404).type('text/plain').send('Not found');
    return reply.type(asset.type).header('cache-control', 'public, max-age=300').send(asset.body);
  });

  const html = (reply: FastifyReply, status: number, body: string) => reply.code(status).type('text/html; charset=utf-8').send(body);
  const unavailable = (reply: FastifyReply, title: string, message: string) =>
    html(reply, 404, page(title, `<h1>${escapeHtml(title)}</h1><p class="notice">${escapeHtml(message)}</p>`));

  // Every page route is of the `page` family: its answers carry the page security headers (no-store,
  // no frame, no referrer, the CSP), chosen on the route matched however the URL was spelled.
  const PAGE = { config: { family: 'page' } } as const;

  /** 410 Gone: the link existed and took its payments; it takes no more. */
  const closed = (reply: FastifyReply, link: PaymentLink, status: 'PAID' | 'LIMIT_REACHED') => {
    const title = status === 'PAID' ? 'This payment link has been paid' : 'This payment link is closed';
    const why =
      status === 'PAID'
        ? 'It was for one payment only, and that payment has been made. No card details are needed.'
        : 'As many customers as the merchant planned have paid with it. No card details are needed.';
    const merchant = link.environment.subsidiary.name;
    return html(
      reply,
      410,
      page(
        title,
        `<p class="merchant">${escapeHtml(merchant)}</p><h1>${escapeHtml(title)}</h1><p class="notice" data-link-status="${status}">${escapeHtml(why)}</p>` +
          `<p>${escapeHtml(link.name)}: if you expected to pay, ask ${escapeHtml(merchant)} for a new link.</p>`,
      ),
    );
  };

  app.get<{ Params: { reference: string } }>('/pay/:reference', PAGE, async (request, reply) => {
    const link = await linkCheckout.findLink(request.params.reference);
    if (!link) return unavailable(reply, 'Payment link not found', 'Check the address you were given, or ask the merchant for a new link.');
    // Closed links show why before any form: nobody types a card into a page that cannot take it.
    const status = await links.status(link);
    if (status === 'DISABLED')
      return unavailable(reply, 'This payment link is not active', 'The merchant is not accepting payments on this link at the moment.');
    if (status !== 'ACTIVE') return closed(reply, link, status);
    const encryptionKey = await merchants.currentEncryptionKey(linkCheckout.tenantOf(link));
    return html(reply, 200, linkPage(link, encryptionKey, links.paymentLinkUrl(link)));
  });

  // A card attempt, counted per IP and per link (the `reference` param) by the rate limits.
  app.post<{ Params: { reference: string }; Body: Record<string, unknown> }>(
    '/pay/:reference',
    { config: { family: 'page', cardAttemptParam: 'reference' } },
    async (request, reply) => {
      try {
        const body = (request.body ?? {}) as Record<string, never>;
        const result = await linkCheckout.pay(request.params.reference, body);
        return reply.send({ redirectUrl: result.redirectUrl });
      } catch (err) {
        if (err instanceof DomainError) return reply.code(400).send({ message: err.message });
        if (err instanceof PayloadDecryptionError)
          return reply.code(400).send({ message: 'Your card details could not be read. Please reload the page and try again.' });
        throw err;
      }
    },
  );

  app.get<{ Params: { reference: string }; Querystring: { status?: string; reference?: string } }>('/pay/:reference/result', PAGE, async (request, reply) => {
    const ok = request.query.status === 'successful';
    return html(
      reply,
      200,
      page(
        ok ? 'Payment successful' : 'Payment failed',
        ok
          ? `<h1 class="good">Payment successful</h1><p>Thank you. Your payment reference is <strong>${escapeHtml(request.query.reference)}</strong>.</p>`
          : `<h1 class="bad">Payment failed</h1><p>Your payment did not go through. No money was taken.</p><p><a href="${escapeHtml(paymentLinkPath(request.params.reference))}">Try again</a></p>`,
      ),
    );
  });

  // --- Sandbox acquirer pages (test environment) ---
  // Each page serves only payments of its own method and accepts only its own form: the
  // 3-D Secure page an `otp`, the PayPal page a `decision`. Anything else is refused with a
  // 4xx and changes nothing; the payment engine checks the same again.
  for (const kind of ['3ds', 'paypal'] as const) {
    const method = kind === '3ds' ? 'C' : 'PAYPAL';
    const notFound = (reply: FastifyReply) => unavailable(reply, 'Authentication not found', 'This authentication page does not exist.');

    app.get<{ Params: { reference: string } }>(`/sandbox/${kind}/:reference`, PAGE, async (request, reply) => {
      const found = await payments.findAuthenticationPage(request.params.reference, method);
      if (!found) return notFound(reply);
      const { order, payment, merchantName } = found;
      const self = `/sandbox/${kind}/${encodeURIComponent(request.params.reference)}`;
      if (payment.statusId === OrderStatus.Processing) return html(reply, 200, processingPage(self));
      if (payment.statusId !== OrderStatus.PendingAuthentication) {
        // A plain GET never redirects: the outcome, with the way back to the merchant only if nobody took it yet.
        const back = (await merchantReturns.claim(payment.reference)) ? merchantRedirect(order) : null;
        return html(reply, 200, finishedPage(order, merchantName, back));
      }
      const amount = formatAmount(order.totalChargedAmount, order.currency);
      return html(reply, 200, kind === '3ds' ? otpPage(merchantName, amount, self) : paypalPage(merchantName, amount, self));
    });

    app.post<{ Params: { reference: string }; Body: unknown }>(`/sandbox/${kind}/:reference`, PAGE, async (request, reply) => {
      const proof = readAuthenticationForm(kind, request.body);
      if (!proof) {
        const form = kind === '3ds' ? 'a one-time password (otp)' : 'a decision (approve or cancel)';
        return html(reply, 400, page('Not accepted', `<h1>Not accepted</h1><p class="notice">This page accepts only ${form}. Nothing was changed.</p>`));
      }
      try {
        const outcome = await payments.completeAuthentication(request.params.reference, proof);
        if (outcome.status === 'processing') return html(reply, 200, processingPage(`/sandbox/${kind}/${encodeURIComponent(request.params.reference)}`));
        // The customer who finished is sent back once; a repeated or concurrent answer sees the outcome.
        if (await merchantReturns.claim(request.params.reference)) return reply.redirect(outcome.redirectUrl, 303);
        return html(reply, 200, finishedPage(outcome.order, null, null));
      } catch (err) {
        if (err instanceof DomainError && err.kind === 'not_found') return notFound(reply);
        if (err instanceof DomainError) return html(reply, 409, page('Not accepted', `<h1>Not accepted</h1><p class="notice">${escapeHtml(err.message)}</p>`));
        throw err;
      }
    });
  }
}

/** The page's own form, and nothing else: `{ otp }` (a non-empty code) or `{ decision: approve | cancel }`. */
function readAuthenticationForm(kind: '3ds' | 'paypal', body: unknown): AuthenticationProof | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const fields = Object.keys(body);
  const field = kind === '3ds' ? 'otp' : 'decision';
  if (fields.length !== 1 || fields[0] !== field) return null;
  const value = (body as Record<string, unknown>)[field];
  if (typeof value !== 'string') return null;
  if (kind === '3ds') {
    const otp = value.trim();
    return otp && otp.length <= 32 ? { method: 'C', otp } : null;
  }
  return value === 'approve' || value === 'cancel' ? { method: 'PAYPAL', approve: value === 'approve' } : null;
}

/** A finished authentication: its outcome, and a link back to the merchant when this answer holds the one return. */
function finishedPage(order: Order, merchantName: string | null, back: string | null): string {
  const ok = order.statusId === OrderStatus.Successful;
  const merchant = merchantName ? escapeHtml(merchantName) : 'the merchant';
  return page(
    ok ? 'Payment successful' : 'Payment failed',
    `<h1 class="${ok ? 'good' : 'bad'}" data-outcome="${ok ? 'successful' : 'failed'}">${ok ? 'Payment successful' : 'Payment failed'}</h1>
<p>This authentication has ended${ok ? '' : ': your payment did not go through'}.</p>
${back ? `<p><a class="button" href="${escapeHtml(back)}">Return to ${merchant}</a></p>` : '<p>You can close this page.</p>'}`,
  );
}

function processingPage(url: string): string {
  return page('Payment processing', `<h1>Your payment is being processed</h1><p>This takes a few seconds. <a href="${escapeHtml(url)}">Check again</a>.</p>`);
}

function linkPage(link: PaymentLink, encryptionKey: string, url: string): string {
  const merchant = link.environment.subsidiary.name;
  const countries = Object.keys(SUPPORTED_COUNTRIES)
    .map((c) => `<option value="${c}"${c === link.environment.subsidiary.country ? ' selected' : ''}>${c}</option>`)
    .join('');
  const amount = link.amount
    ? `<p class="amount" data-testid="amount">${escapeHtml(formatAmount(link.amount, link.currency))}</p>`
    : `<label for="amount">Amount (${escapeHtml(link.currency)})</label><input id="amount" name="amount" inputmode="decimal" required pattern="[0-9]+(\\.[0-9]{1,2})?">`;
  const field = (id: string, label: string, attrs = '') => `<label for="${id}">${label}</label><input id="${id}" name="${id}" ${attrs}>`;
  return page(
    `Pay ${merchant}: ${link.name}`,
    `<p class="merchant">${escapeHtml(merchant)}</p>
<h1>${escapeHtml(link.name)}</h1>
${link.description ? `<p>${escapeHtml(link.description)}</p>` : ''}
${link.environment.mode === 'test' ? '<p class="hint">Test mode: use a test card, no real money moves.</p>' : ''}
<form id="pay-form" action="${escapeHtml(url)}" method="post" data-encryption-key="${escapeHtml(encryptionKey)}" novalidate>
${amount}
<fieldset><legend>Your details</legend>
<div class="row"><div>${field('firstname', 'First name', 'required autocomplete="given-name"')}</div><div>${field('lastname', 'Last name', 'required autocomplete="family-name"')}</div></div>
${field('email', 'E-mail', 'type="email" required autocomplete="email"')}
${field('mobile', 'Mobile number', 'type="tel" required autocomplete="tel" placeholder="+234…"')}
<label for="country">Country</label><select id="country" name="country">${countries}</select>
</fieldset>
<fieldset class="options"><legend>Pay with</legend>
<label><input type="radio" name="paymentOption" value="C" checked> Card</label>
${link.environment.subsidiary.paypalEnabled ? '<label><input type="radio" name="paymentOption" value="PAYPAL"> PayPal</label>' : ''}
</fieldset>
<fieldset id="card-fields"><legend>Card</legend>
${field('cardNumber', 'Card number', 'inputmode="numeric" autocomplete="cc-number" data-required="true"')}
<div class="row"><div>${field('expiryMonth', 'Month (MM)', 'inputmode="numeric" maxlength="2" autocomplete="cc-exp-month" data-required="true"')}</div>
<div>${field('expiryYear', 'Year (YY)', 'inputmode="numeric" maxlength="2" autocomplete="cc-exp-year" data-required="true"')}</div>
<div>${field('cvv', 'CVV', 'inputmode="numeric" maxlength="4" autocomplete="cc-csc" data-required="true"')}</div></div>
</fieldset>
<fieldset id="paypal-fields" hidden><legend>PayPal</legend>${field('house', 'House or building')}</fieldset>
<fieldset><legend>Billing address</legend>
${field('street', 'Street', 'required autocomplete="address-line1"')}
<div class="row"><div>${field('city', 'City', 'required autocomplete="address-level2"')}</div><div>${field('state', 'State', 'autocomplete="address-level1"')}</div></div>
<div class="row"><div>${field('billingCountry', 'Country (ISO code)', `required maxlength="2" value="${escapeHtml(link.environment.subsidiary.country)}"`)}</div><div>${field('zipcode', 'Postal code', 'autocomplete="postal-code"')}</div></div>
</fieldset>
<p id="pay-error" class="error" role="alert" aria-live="polite"></p>
<button type="submit">Pay${link.amount ? ` ${escapeHtml(formatAmount(link.amount, link.currency))}` : ''}</button>
<noscript><p class="bad">This page needs JavaScript to encrypt your card details.</p></noscript>
</form>`,
    { scripts: ['/checkout-assets/forge.min.js', '/checkout-assets/pgw-client.js', '/checkout-assets/checkout.js'] },
  );
}

function otpPage(merchant: string, amount: string, action: string): string {
  return page(
    '3-D Secure authentication',
    `<p class="merchant">Sandbox issuer · 3-D Secure</p>
<h1>Confirm your payment</h1>
<p>${escapeHtml(merchant)} is charging <strong>${escapeHtml(amount)}</strong> to your card.</p>
<form method="post" action="${escapeHtml(action)}">
<label for="otp">One-time password</label>
<input id="otp" name="otp" inputmode="numeric" autocomplete="one-time-code" required maxlength="8">
<p class="hint">Sandbox: 123456 authenticates; any other code fails.</p>
<button type="submit">Confirm</button>
</form>`,
  );
}

function paypalPage(merchant: string, amount: string, action: string): string {
  return page(
    'PayPal approval',
    `<p class="merchant">PayPal sandbox</p>
<h1>Approve your payment</h1>
<p>${escapeHtml(merchant)} asks you to pay <strong>${escapeHtml(amount)}</strong>.</p>
<form method="post" action="${escapeHtml(action)}">
<button type="submit" name="decision" value="approve">Approve and pay</button>
<button type="submit" name="decision" value="cancel" class="secondary">Cancel</button>
</form>`,
  );
}
