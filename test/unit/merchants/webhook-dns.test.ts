import { WebhookDns } from '../../../src/merchants/webhook-dns';
import { startDnsServer, type DnsServer } from '../../support/dns-server';

/** Webhook host resolution against a nameserver of the test's own, on loopback UDP (never the system's). */
describe('WebhookDns', () => {
  let server: DnsServer;
  beforeAll(async () => {
    server = await startDnsServer({ 'hooks.example': ['93.184.216.34', '2606:2800:220:1::1'], 'v4only.example': ['93.184.216.35'] }, [
      'stalled-1.example',
      'stalled-2.example',
      'stalled-3.example',
      'stalled-4.example',
    ]);
  });
  afterAll(async () => {
    await server.close();
  });
  const dns = (options: { maxLookups?: number } = {}) => new WebhookDns({ servers: [server.address], timeoutMs: 300, tries: 1, ...options });

  it('resolves the A and AAAA records of a name through the nameservers it is given', async () => {
    expect(await dns().resolve('hooks.example')).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ]);
    expect(await dns().resolve('V4ONLY.example.')).toEqual([{ address: '93.184.216.35', family: 4 }]);
    await expect(dns().resolve('nowhere.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('fails with ETIMEOUT at its deadline when the nameserver never answers', async () => {
    const resolver = dns();
    expect(resolver.deadlineMs).toBe(300);
    await expect(resolver.resolve('stalled-1.example')).rejects.toMatchObject({
      code: 'ETIMEOUT',
      message: 'stalled-1.example did not resolve within 300 ms',
    });
    expect(server.questions.filter((q) => q.name === 'stalled-1.example').map((q) => q.type)).toEqual(['A', 'AAAA']);
  });

  it('answers localhost names and IP addresses without asking DNS', async () => {
    const before = server.questions.length;
    const resolver = dns();
    const loopback = [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
    expect(await resolver.resolve('localhost')).toEqual(loopback);
    expect(await resolver.resolve('api.LOCALHOST.')).toEqual(loopback);
    expect(await resolver.resolve('93.184.216.34')).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(server.questions.length).toBe(before);
  });

  it('runs at most maxLookups look-ups at once: a flood of names on a silent nameserver asks no more, and the rest wait within their deadline', async () => {
    const resolver = new WebhookDns({ servers: [server.address], timeoutMs: 1000, tries: 1, maxLookups: 2 });
    const names = ['stalled-2.example', 'stalled-3.example', 'stalled-4.example'];
    const outcomes = Promise.allSettled(names.map((name) => resolver.resolve(name)));
    await Promise.all([server.asked(names[0]!), server.asked(names[1]!)]);
    // Both resolvers are taken: the third name waits for one and is not asked meanwhile.
    expect(server.questions.filter((q) => q.name === names[2])).toEqual([]);
    const settled = await outcomes;
    expect(settled.map((o) => o.status === 'rejected' && (o.reason as NodeJS.ErrnoException).code)).toEqual(['ETIMEOUT', 'ETIMEOUT', 'ETIMEOUT']);
  });

  it('asks once for a name several deliveries need at the same time', async () => {
    const resolver = dns();
    const before = server.questions.filter((q) => q.name === 'hooks.example').length;
    const [a, b] = await Promise.all([resolver.resolve('hooks.example'), resolver.resolve('hooks.example')]);
    expect(a).toEqual(b);
    expect(server.questions.filter((q) => q.name === 'hooks.example').length - before).toBe(2); // one A, one AAAA
  });
});
