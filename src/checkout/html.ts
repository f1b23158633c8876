import { formatMoney } from '../shared/money';

/** Minimal server-rendered HTML: escaped values, one stylesheet, no build chain. */

export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export function page(title: string, body: string, options: { scripts?: string[] } = {}): string {
  const scripts = (options.scripts ?? []).map((src) => `<script src="${escapeHtml(src)}" defer></script>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/checkout-assets/checkout.css">
${scripts}
</head>
<body>
<main class="card">
${body}
</main>
</body>
</html>`;
}

/** "NGN 15,000.00": exact (decimal strings, never floats), in the currency's minor units. */
export function formatAmount(amount: string, currency: string): string {
  return formatMoney(amount, currency);
}
