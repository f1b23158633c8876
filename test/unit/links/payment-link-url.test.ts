import { paymentLinkPath, paymentLinkResultUrl, paymentLinkUrl } from '../../../src/links/payment-link-url';

describe('payment link addresses (links domain)', () => {
  it("puts a link's page at /pay/<reference> on the service's public URL", () => {
    expect(paymentLinkPath('PLABCDEFGH23456789')).toBe('/pay/PLABCDEFGH23456789');
    expect(paymentLinkUrl('https://checkout.example.test', 'PLABCDEFGH23456789')).toBe('https://checkout.example.test/pay/PLABCDEFGH23456789');
  });

  it('sends a customer back to the result page under the link page', () => {
    expect(paymentLinkResultUrl('http://127.0.0.1:3000', 'PLX')).toBe('http://127.0.0.1:3000/pay/PLX/result');
  });

  it('gives the prefix every reference is appended to (as the SQL-built link lists use it)', () => {
    expect(paymentLinkUrl('https://pay.example.test', '') + 'PLX').toBe(paymentLinkUrl('https://pay.example.test', 'PLX'));
  });
});
