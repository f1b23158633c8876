import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app-context';
import { DomainError } from '../shared/errors';
import { PayloadDecryptionError } from '../crypto/payload-decryptor';
import { type Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import { merchantRedirect, type AuthenticationProof } from '../payments/payment.service';
import { ProcessorTimeoutError } from '../payments/processor-time-limit';
import type { PaymentLink } from '../links/payment-link.entity';
import { browserClientScript, forgeScriptPath } from './browser-client';
import { escapeHtml, formatAmount, page } from './html';
import { merchantReturnUrl, resultPage } from './result-page';
import { linkPage } from './link-page';

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
  const { links, payments, linkCheckout, merchants, merchantReturns, orders } = ctx.services;
  const assets = {
    'checkout.css': { type: 'text/css; charset=utf-8', body: publicFile('checkout.css') },
    'checkout.js': { type: 'text/javascript; charset=utf-8', body: publicFile('checkout.js') },
    'pgw-client.js': { type: 'text/javascript; charset=utf-8', body: browserClientScript() },
    'forge.min.js': { type: 'text/javascript; charset=utf-8', body: fs.readFileSync(forgeScriptPath(), 'utf8') },
  } as const;

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(typeof body === 'string' ? body : body.toString('utf8'))));
  });

  app.get<{ Params: { name: keyof typeof assets } }>('/checkout-assets/:name', { config: { quietLog: true } }, async (request, reply) => {
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

  // The outcome as the order stands, found by the link (route param) and the order reference the
  // merchant redirect adds; a `status` in the address is never read.
  app.get<{ Params: { reference: string }; Querystring: { reference?: unknown } }>('/pay/:reference/result', PAGE, async (request, reply) => {
    const missing = () => unavailable(reply, 'Payment not found', 'We could not find this payment. Check the address, or ask the merchant.');
    const link = await linkCheckout.findLink(request.params.reference);
    const orderReference = request.query.reference;
    if (!link || typeof orderReference !== 'string' || !orderReference.trim()) return missing();
    let order;
    try {
      ({ order } = await orders.getAggregate(linkCheckout.tenantOf(link), orderReference));
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found') return missing();
      throw err;
    }
    // An order of the same merchant made on another link (or none) is not this link's result.
    if (order.paymentLink?.id !== link.id) return missing();
    const linkUrl = links.paymentLinkUrl(link);
    const resultUrl = `${linkUrl}/result`;
    return html(reply, 200, resultPage(link, order, { linkUrl, resultUrl, back: merchantReturnUrl(link, order, resultUrl) }));
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
        // The processor did not answer in time: the outcome is confirmed from its record shortly.
        if (err instanceof ProcessorTimeoutError) return html(reply, 200, processingPage(`/sandbox/${kind}/${encodeURIComponent(request.params.reference)}`));
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
  const held = order.statusId === OrderStatus.Authorized;
  const ok = order.statusId === OrderStatus.Successful || held;
  const merchant = merchantName ? escapeHtml(merchantName) : 'the merchant';
  const title = held ? 'Payment authorised' : ok ? 'Payment successful' : 'Payment failed';
  const ended = held
    ? ': your payment is authorised, but you have not been charged yet; the merchant will take it when your order is confirmed'
    : ok
      ? ''
      : ': your payment did not go through';
  return page(
    title,
    `<h1 class="${ok ? 'good' : 'bad'}" data-outcome="${held ? 'authorized' : ok ? 'successful' : 'failed'}">${title}</h1>
<p>This authentication has ended${ended}.</p>
${back ? `<p><a class="button" href="${escapeHtml(back)}">Return to ${merchant}</a></p>` : '<p>You can close this page.</p>'}`,
  );
}

function processingPage(url: string): string {
  return page('Payment processing', `<h1>Your payment is being processed</h1><p>This takes a few seconds. <a href="${escapeHtml(url)}">Check again</a>.</p>`);
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
