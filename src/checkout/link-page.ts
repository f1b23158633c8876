import { SUPPORTED_COUNTRIES } from '../shared/countries';
import type { PaymentLink } from '../links/payment-link.entity';
import { linkAmountShown, linkTermsVersion } from '../links/link-terms';
import { escapeHtml, formatAmount, page } from './html';

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });

/** The accepted countries by name (sorted for people), each with its ISO 3166-1 alpha-2 code as the value. */
export function countryOptions(selected: string): string {
  return Object.keys(SUPPORTED_COUNTRIES)
    .map((code) => ({ code, name: regionNames.of(code) ?? code }))
    .sort((a, b) => a.name.localeCompare(b.name, 'en'))
    .map(({ code, name }) => `<option value="${code}"${code === selected ? ' selected' : ''}>${escapeHtml(name)}</option>`)
    .join('');
}

interface FieldOptions {
  label: string;
  attrs?: string;
  optional?: boolean;
  /** Card fields carry no `name`: a form sent without the page's script never carries them in clear. */
  unnamed?: boolean;
  after?: string;
}

/** A labelled control with its own error line, announced and tied to it (aria-describedby). */
function field(id: string, o: FieldOptions): string {
  const optional = o.optional ? ' <span class="optional">(optional)</span>' : '';
  return `<div class="field"><label for="${id}">${o.label}${optional}</label>
<div class="control"><input id="${id}"${o.unnamed ? '' : ` name="${id}"`} ${o.attrs ?? ''} aria-describedby="${id}-error">${o.after ?? ''}</div>
<p class="field-error" id="${id}-error" data-error-for="${id}"></p></div>`;
}

function select(id: string, label: string, options: string, attrs = ''): string {
  return `<div class="field"><label for="${id}">${label}</label>
<div class="control"><select id="${id}" name="${id}" ${attrs} aria-describedby="${id}-error">${options}</select></div>
<p class="field-error" id="${id}-error" data-error-for="${id}"></p></div>`;
}

/**
 * The payment-link page: customer details, card (or PayPal) and billing address. The script
 * (public/checkout.js) checks each field, shows what to fix next to it, and encrypts the card
 * part under the merchant's key before anything is sent.
 */
export function linkPage(link: PaymentLink, encryptionKey: string, url: string): string {
  const merchant = link.environment.subsidiary.name;
  const home = link.environment.subsidiary.country;
  const amount = link.amount
    ? `<p class="amount" data-testid="amount">${escapeHtml(formatAmount(link.amount, link.currency))}</p>`
    : field('amount', { label: `Amount (${escapeHtml(link.currency)})`, attrs: 'inputmode="decimal" required autocomplete="transaction-amount"' });
  return page(
    `Pay ${merchant}: ${link.name}`,
    `<p class="merchant">${escapeHtml(merchant)}</p>
<h1>${escapeHtml(link.name)}</h1>
${link.description ? `<p>${escapeHtml(link.description)}</p>` : ''}
${link.environment.mode === 'test' ? '<p class="hint">Test mode: use a test card, no real money moves.</p>' : ''}
<form id="pay-form" action="${escapeHtml(url)}" method="post" data-encryption-key="${escapeHtml(encryptionKey)}" data-terms="${escapeHtml(linkTermsVersion(link))}"${link.amount ? ` data-amount="${escapeHtml(linkAmountShown(link)!)}"` : ''} novalidate>
${amount}
<fieldset><legend>Your details</legend>
<div class="row">${field('firstname', { label: 'First name', attrs: 'required autocomplete="given-name"' })}${field('lastname', { label: 'Last name', attrs: 'required autocomplete="family-name"' })}</div>
${field('email', { label: 'E-mail', attrs: 'type="email" required autocomplete="email" inputmode="email"' })}
${field('mobile', { label: 'Mobile number', attrs: 'type="tel" required autocomplete="tel" inputmode="tel" placeholder="+234 801 234 5678"' })}
${select('country', 'Country', countryOptions(home), 'autocomplete="country"')}
</fieldset>
<fieldset class="options"><legend>Pay with</legend>
<label class="option"><input type="radio" name="paymentOption" value="C" checked> Card</label>
${link.environment.subsidiary.paypalEnabled ? '<label class="option"><input type="radio" name="paymentOption" value="PAYPAL"> PayPal</label>' : ''}
</fieldset>
<fieldset id="card-fields"><legend>Card</legend>
${field('cardNumber', {
  label: 'Card number',
  unnamed: true,
  attrs: 'inputmode="numeric" autocomplete="cc-number" data-required="true" placeholder="1234 1234 1234 1234" maxlength="23" spellcheck="false"',
  after: '<span id="card-brand" class="brand" aria-live="polite"></span>',
})}
<div class="row">${field('expiry', { label: 'Expiry date (MM / YY)', unnamed: true, attrs: 'inputmode="numeric" autocomplete="cc-exp" data-required="true" placeholder="MM / YY" maxlength="7"' })}
${field('cvv', { label: 'Security code (CVV)', unnamed: true, attrs: 'inputmode="numeric" autocomplete="cc-csc" data-required="true" placeholder="123" maxlength="4"' })}</div>
</fieldset>
<fieldset id="paypal-fields" hidden><legend>PayPal</legend>${field('house', { label: 'House or building', optional: true, attrs: 'autocomplete="address-line2"' })}</fieldset>
<fieldset><legend>Billing address</legend>
${field('street', { label: 'Street', attrs: 'required autocomplete="address-line1"' })}
<div class="row">${field('city', { label: 'City', attrs: 'required autocomplete="address-level2"' })}${field('state', { label: 'State', optional: true, attrs: 'autocomplete="address-level1"' })}</div>
<div class="row">${select('billingCountry', 'Country', countryOptions(home), 'autocomplete="country"')}${field('zipcode', {
      label: 'Postal code',
      optional: true,
      attrs: 'autocomplete="postal-code"',
    })}</div>
</fieldset>
<p id="pay-error" class="error" role="alert" aria-live="polite"></p>
<button type="submit">Pay${link.amount ? ` ${escapeHtml(formatAmount(link.amount, link.currency))}` : ''}</button>
<noscript><p class="bad">This page needs JavaScript to encrypt your card details.</p></noscript>
</form>`,
    { scripts: ['/checkout-assets/forge.min.js', '/checkout-assets/pgw-client.js', '/checkout-assets/checkout.js'] },
  );
}
