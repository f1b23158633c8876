import { isInternalAddress, validateWebhookUrl } from '../../src/events/webhook-url';

describe('webhook URL rules', () => {
  const strict = { allowPrivate: false };

  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.0.0.1/',
    'http://localhost/hooks',
    'http://api.localhost/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://192.168.1.10/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fd00::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[64:ff9b::a00:1]/',
  ])('refuses %s in the live environment', (url) => {
    expect(() => validateWebhookUrl(url, 'live', strict, 'LiveWebhookUrl')).toThrow(
      'The LiveWebhookUrl field must not point to a loopback, private or link-local address.',
    );
    // The test environment and ALLOW_PRIVATE_WEBHOOK_URLS accept them.
    expect(validateWebhookUrl(url, 'test', strict)).toBe(url);
    expect(validateWebhookUrl(url, 'live', { allowPrivate: true })).toBe(url);
  });

  it.each(['http://169.254.169.254/latest/meta-data/', 'http://[fe80::1]/', 'http://[::ffff:a9fe:a9fe]/', 'http://[::ffff:169.254.1.1]/'])(
    'refuses the link-local %s in every environment, whatever the policy',
    (url) => {
      for (const [mode, policy] of [['test', strict], ['live', strict], ['live', { allowPrivate: true }]] as const) {
        expect(() => validateWebhookUrl(url, mode, policy)).toThrow('The WebhookUrl field must not point to a link-local address.');
      }
    },
  );

  it.each(['https://acme.test/hooks', 'http://8.8.8.8/x', 'https://[2001:4860:4860::8888]/', 'https://hooks.example.com:8443/a?b=c'])('accepts %s everywhere', (url) => {
    expect(validateWebhookUrl(url, 'live', strict)).toBe(url);
    expect(validateWebhookUrl(url, 'test', strict)).toBe(url);
  });

  it.each(['ftp://acme.test/', 'javascript:alert(1)', 'not a url', 'file:///etc/passwd', 'http://'])('refuses %s: http or https only', (url) => {
    expect(() => validateWebhookUrl(url, 'test', strict)).toThrow('The WebhookUrl field must be an http or https URL.');
  });

  it('refuses overly long URLs and trims', () => {
    expect(() => validateWebhookUrl(`https://acme.test/${'a'.repeat(2100)}`, 'test', strict)).toThrow(/at most 2048/);
    expect(validateWebhookUrl('  https://acme.test/h  ', 'live', strict)).toBe('https://acme.test/h');
  });

  it('classifies addresses', () => {
    expect(isInternalAddress('127.0.0.1')).toBe(true);
    expect(isInternalAddress('::ffff:10.0.0.1')).toBe(true);
    expect(isInternalAddress('::1')).toBe(true);
    expect(isInternalAddress('93.184.216.34')).toBe(false);
    expect(isInternalAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(false);
    expect(isInternalAddress('::ffff:93.184.216.34')).toBe(false);
  });
});
