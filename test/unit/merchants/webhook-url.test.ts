import {
  canonicalAddress,
  isInternalAddress,
  parseCidr,
  validateWebhookUrl,
  webhookDestination,
  WebhookAddressPolicy,
  type WebhookResolver,
} from '../../../src/merchants/webhook-url';

/** A resolver that answers from a table and never asks DNS (unknown names do not resolve). */
const table =
  (entries: Record<string, string[]>): WebhookResolver =>
  async (hostname) => {
    const addresses = entries[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('webhook URL rules', () => {
  const REFUSED = 'The WebhookUrl field must not point to a loopback, private, link-local or other internal address.';
  const strict = { resolve: table({}) };

  it.each([
    'http://127.0.0.1:8080/hooks',
    'http://127.1/',
    'http://2130706433/',
    'http://0x7f.1/',
    'http://0x7f.0.0.1/',
    'http://017700000001/',
    'http://127.0.0.1./',
    'http://localhost/hooks',
    'http://LOCALHOST./',
    'http://api.localhost/',
    'http://10.1.2.3/',
    'http://172.16.0.1/',
    'http://192.168.1.10/',
    'http://100.64.0.1/',
    'http://0.0.0.0/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/',
    'http://[::]/',
    'http://[fd00::1]/',
    'http://[fe80::1]/',
    'http://[ff02::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[::7f00:1]/',
    'http://[64:ff9b::a00:1]/',
  ])('refuses %s in either environment (numeric, IPv6 and IPv4-mapped forms)', async (url) => {
    await expect(validateWebhookUrl(url, strict)).rejects.toThrow(REFUSED);
    await expect(validateWebhookUrl(url, strict, 'LiveWebhookUrl')).rejects.toThrow(REFUSED.replace('WebhookUrl', 'LiveWebhookUrl'));
  });

  it('refuses a host name that resolves to an internal address, when it is set', async () => {
    const resolve = table({
      'intranet.example': ['10.0.0.7'],
      'mixed.example': ['93.184.216.34', '::ffff:192.168.0.1'],
      'public.example': ['93.184.216.34', '2606:2800:220:1::1'],
    });
    await expect(validateWebhookUrl('https://intranet.example/h', { resolve })).rejects.toThrow(REFUSED);
    await expect(validateWebhookUrl('https://mixed.example/h', { resolve })).rejects.toThrow(REFUSED);
    await expect(validateWebhookUrl('https://public.example/h', { resolve })).resolves.toBe('https://public.example/h');
    // A name that does not resolve (now) is left to the check at delivery.
    await expect(validateWebhookUrl('https://nowhere.example/h', { resolve })).resolves.toBe('https://nowhere.example/h');
  });

  it('WEBHOOK_ALLOWED_NETWORKS exempts exactly the networks named', async () => {
    const dev = { allowedNetworks: ['127.0.0.0/8'], resolve: table({ localhost: ['127.0.0.1'], 'db.internal': ['10.0.0.5'] }) };
    for (const url of ['http://127.0.0.1:4000/h', 'http://[::ffff:127.0.0.1]/', 'http://localhost:3000/h', 'http://2130706433/']) {
      await expect(validateWebhookUrl(url, dev)).resolves.toBe(url);
    }
    for (const url of ['http://10.0.0.5/', 'http://db.internal/', 'http://[::1]/', 'http://169.254.169.254/']) {
      await expect(validateWebhookUrl(url, dev)).rejects.toThrow(REFUSED);
    }
    // localhost is loopback whatever a resolver says: one exempted loopback family is enough (delivery connects to that one only).
    const bothFamilies = { allowedNetworks: ['127.0.0.0/8'], resolve: table({ localhost: ['127.0.0.1', '::1'] }) };
    await expect(validateWebhookUrl('http://localhost:3000/h', bothFamilies)).resolves.toBe('http://localhost:3000/h');
    // The deprecated ALLOW_PRIVATE_WEBHOOK_URLS: loopback, private and unique-local, never link-local.
    const legacy = { allowPrivate: true, resolve: table({}) };
    for (const url of ['http://127.0.0.1/', 'http://10.1.2.3/', 'http://[fd00::1]/', 'http://[::1]/'])
      await expect(validateWebhookUrl(url, legacy)).resolves.toBe(url);
    for (const url of ['http://169.254.169.254/', 'http://[fe80::1]/', 'http://100.64.0.1/'])
      await expect(validateWebhookUrl(url, legacy)).rejects.toThrow(REFUSED);
  });

  it.each(['https://acme.test/hooks', 'http://8.8.8.8/x', 'https://[2001:4860:4860::8888]/', 'https://hooks.example.com:8443/a?b=c'])(
    'accepts %s',
    async (url) => {
      await expect(validateWebhookUrl(url, strict)).resolves.toBe(url);
    },
  );

  it.each(['ftp://acme.test/', 'javascript:alert(1)', 'not a url', 'file:///etc/passwd', 'http://'])('refuses %s: http or https only', async (url) => {
    await expect(validateWebhookUrl(url, strict)).rejects.toThrow('The WebhookUrl field must be an http or https URL.');
  });

  it('refuses overly long URLs and trims', async () => {
    await expect(validateWebhookUrl(`https://acme.test/${'a'.repeat(2100)}`, strict)).rejects.toThrow(/at most 2048/);
    await expect(validateWebhookUrl('  https://acme.test/h  ', strict)).resolves.toBe('https://acme.test/h');
  });

  it.each([
    // IPv4-translated (::ffff:0:0/96), as in the attack report and spelled out.
    ['http://[::ffff:0:7f00:1]/', '127.0.0.1'],
    ['http://[::ffff:0:127.0.0.1]/', '127.0.0.1'],
    ['http://[::ffff:0:a00:1]/', '10.0.0.1'],
    ['http://[0:0:0:0:ffff:0:a9fe:a9fe]/', '169.254.169.254'],
    // 6to4 with an internal IPv4 address embedded.
    ['http://[2002:7f00:1::]/', '127.0.0.1'],
    ['http://[2002:c0a8:101::1]/', '192.168.1.1'],
    ['http://[2002:a9fe:a9fe:1:2:3:4:5]/', '169.254.169.254'],
    // IPv4-compatible (::a.b.c.d).
    ['http://[::127.0.0.1]/', '127.0.0.1'],
    ['http://[::10.1.2.3]/', '10.1.2.3'],
  ])('refuses %s: an IPv6 spelling of the internal IPv4 address %s', async (url, v4) => {
    await expect(validateWebhookUrl(url, strict)).rejects.toThrow(REFUSED);
    expect(canonicalAddress(new URL(url).hostname)).toBe(v4);
  });

  it.each([
    ['Teredo', 'http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/'],
    ['Teredo (any server and client)', 'http://[2001:0:5ef5:79fd:0:59d:a0e5:ba1]/'],
    ['local-use NAT64', 'http://[64:ff9b:1::a00:1]/'],
    ['local-use NAT64 with a public IPv4 inside', 'http://[64:ff9b:1:5db8:d822:0:0:0]/'],
    ['discard-only', 'http://[100::1]/'],
    ['documentation', 'http://[2001:db8::1]/'],
    ['documentation (far end)', 'http://[2001:db8:ffff:ffff:ffff:ffff:ffff:ffff]/'],
  ])('refuses a %s address: %s', async (_kind, url) => {
    await expect(validateWebhookUrl(url, strict)).rejects.toThrow(REFUSED);
    expect(isInternalAddress(new URL(url).hostname)).toBe(true);
  });

  it.each([
    'http://[2002:5db8:d822::1]/', // 6to4 of the public 93.184.216.34
    'http://[::ffff:0:5db8:d822]/', // IPv4-translated public address
    'http://[::93.184.216.34]/', // IPv4-compatible public address
    'http://[64:ff9b::5db8:d822]/', // well-known NAT64 prefix, public address
    'http://[2001:4860:4860::8888]/', // ordinary global unicast next to the Teredo prefix
    'http://[2001:db9::1]/', // just outside the documentation prefix
  ])('accepts %s: the address it reaches is public', async (url) => {
    await expect(validateWebhookUrl(url, strict)).resolves.toBe(url);
  });

  it('judges an embedded IPv4 address by the exempted networks too', () => {
    const policy = new WebhookAddressPolicy(['127.0.0.0/8']);
    expect(policy.isRefused('2002:7f00:1::')).toBe(false);
    expect(policy.isRefused('::ffff:0:7f00:1')).toBe(false);
    expect(policy.isRefused('2002:a00:1::')).toBe(true);
  });

  it('classifies addresses, with IPv6 spellings of IPv4 addresses reduced to IPv4', () => {
    expect(isInternalAddress('127.0.0.1')).toBe(true);
    expect(isInternalAddress('::ffff:10.0.0.1')).toBe(true);
    expect(isInternalAddress('::ffff:7f00:1')).toBe(true);
    expect(isInternalAddress('::1')).toBe(true);
    expect(isInternalAddress('93.184.216.34')).toBe(false);
    expect(isInternalAddress('2606:2800:220:1:248:1893:25c8:1946')).toBe(false);
    expect(isInternalAddress('::ffff:93.184.216.34')).toBe(false);
    expect(canonicalAddress('::ffff:7f00:1')).toBe('127.0.0.1');
    expect(canonicalAddress('[::FFFF:127.0.0.1]')).toBe('127.0.0.1');
    expect(canonicalAddress('example.com')).toBeNull();
    const policy = new WebhookAddressPolicy(['127.0.0.0/8', '::1']);
    expect(policy.isRefused('127.0.0.2')).toBe(false);
    expect(policy.isRefused('::ffff:127.0.0.2')).toBe(false);
    expect(policy.isRefused('::1')).toBe(false);
    expect(policy.isRefused('10.0.0.1')).toBe(true);
    expect(policy.isRefused('not-an-address')).toBe(true);
  });

  it('parses CIDRs and names destinations by origin', () => {
    expect(parseCidr('10.0.0.0/8')).toEqual({ network: '10.0.0.0', prefix: 8, family: 4 });
    expect(parseCidr('::1')).toEqual({ network: '::1', prefix: 128, family: 6 });
    for (const bad of ['10.0.0.0/33', 'fe80::/129', 'localhost/8', '10.0.0.0/8/1', '']) expect(parseCidr(bad)).toBeNull();
    expect(webhookDestination('https://User:pw@Hooks.Example.com:443/a?b')).toBe('https://hooks.example.com');
    expect(webhookDestination('http://127.0.0.1:8080/x')).toBe('http://127.0.0.1:8080');
  });
});
