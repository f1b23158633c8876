import fs from 'node:fs';
import path from 'node:path';
import { startTestService, type TestService } from '../../support/service';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'package.json'), 'utf8')) as { version: string };
/** The logo @fastify/swagger-ui shows when it is given none. */
const fastifyLogo = fs.readFileSync(require.resolve('@fastify/swagger-ui/static/logo.svg')).toString('base64');

describe("Swagger UI under this service's name and release", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t.close();
  });

  const get = async (p: string) => {
    const res = await fetch(`${t.baseUrl}${p}`);
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it("titles the page with the service's name and links its own icon, not Swagger's", async () => {
    const page = await get('/docs/');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<title>REST API · Checkout gateway<\/title>/);
    expect(page.text).not.toMatch(/Swagger UI|favicon-32x32/);
    const icon = page.text.match(/<link rel="icon" type="image\/svg\+xml" href="([^"]+)"/)?.[1];
    expect(icon).toBe('./static/theme/favicon.svg');
    const served = await get('/docs/static/theme/favicon.svg');
    expect(served).toMatchObject({ status: 200, type: 'image/svg+xml' });
    expect(served.text).toMatch(/^<svg /);
  });

  it("shows the service's logo, naming it, in place of Fastify's", async () => {
    const script = (await get('/docs/static/swagger-initializer.js')).text;
    expect(script).not.toContain(fastifyLogo);
    const logo = script.match(/data:image\/svg\+xml;base64,([A-Za-z0-9+/=]+)/)?.[1];
    expect(logo).toBeDefined();
    const svg = Buffer.from(logo!, 'base64').toString('utf8');
    expect(svg).toContain('aria-label="Checkout gateway"');
    expect(svg).toContain('>Checkout gateway</text>');
  });

  it("documents the release package.json names, under the service's name", async () => {
    for (const p of ['/docs/json', '/openapi.json']) {
      const doc = JSON.parse((await get(p)).text);
      expect(doc.info.version).toBe(manifest.version);
      expect(doc.info.title).toBe('Checkout gateway: REST compatibility interface');
    }
  });
});
