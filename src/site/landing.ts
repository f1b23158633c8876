import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { getIntrospectionQuery } from 'graphql';
import type { AppContext } from '../app-context';
import { sendHtmlPage } from '../shared/html-page';
import { escapeHtml, page } from '../checkout/html';
import { readDemoRecord } from '../operations/demo-record';

/** Same strictness as the checkout pages: our own scripts and styles only, nothing inline, no framing. */
const LANDING_CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
/** GraphiQL: the same, plus data: fonts of its stylesheet; 'self' covers its same-origin WebSocket for subscriptions. */
const GRAPHIQL_CSP =
  "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

/** Files served under /graphiql/, each from its npm package (no CDN: works offline). */
const GRAPHIQL_FILES: Record<string, { pkg: string; file: string; type: string }> = {
  'react.production.min.js': { pkg: 'react', file: 'umd/react.production.min.js', type: 'text/javascript; charset=utf-8' },
  'react-dom.production.min.js': { pkg: 'react-dom', file: 'umd/react-dom.production.min.js', type: 'text/javascript; charset=utf-8' },
  'graphiql.min.js': { pkg: 'graphiql', file: 'graphiql.min.js', type: 'text/javascript; charset=utf-8' },
  'graphiql.min.css': { pkg: 'graphiql', file: 'graphiql.min.css', type: 'text/css; charset=utf-8' },
  'graphql-ws.min.js': { pkg: 'graphql-ws', file: 'umd/graphql-ws.min.js', type: 'text/javascript; charset=utf-8' },
};

const OWN_FILES: Record<string, string> = {
  'graphiql-app.js': 'text/javascript; charset=utf-8',
  'graphiql-page.css': 'text/css; charset=utf-8',
};

/** A package's folder (its exports map hides prebuilt files from require.resolve). */
function packageDir(name: string): string {
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === name) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package ${name} not found`);
    dir = parent;
  }
}

function ownFile(name: string): string {
  const candidates = [path.join(__dirname, 'public', name), path.join(__dirname, '..', '..', '..', 'src', 'site', 'public', name)];
  return fs.readFileSync(
    candidates.find((c) => fs.existsSync(c))!,
    'utf8',
  );
}

/** The start page (`GET /`) and GraphiQL (`GET /graphiql`): where a first run leads. */
export async function registerSite(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const cache = new Map<string, string>();
  const load = (key: string, read: () => string) => {
    let body = cache.get(key);
    if (body === undefined) cache.set(key, (body = read()));
    return body;
  };

  const PAGE = { config: { family: 'page' } } as const;
  app.get('/', PAGE, async (_request, reply) => {
    const demo = readDemoRecord(ctx.config.dataDir);
    const demoItem = demo
      ? `<li><a href="${escapeHtml(new URL(demo.paymentLinkUrl).pathname)}">Demo checkout page</a>: a payment link of the demo merchant. Pay with card 4111 1111 1111 1111, any future expiry and CVV, then OTP 123456.</li>`
      : '';
    const body = `<h1>Checkout gateway</h1>
<p>Hosted checkout and payment links: a GraphQL API, a REST compatibility interface and signed webhooks.</p>
<ul class="links">
<li><a href="/graphiql">GraphiQL</a>: try the GraphQL API in the browser; paste an api-key first.</li>
<li><a href="/docs">REST API documentation</a> (OpenAPI).</li>
${demoItem}
<li><a href="/dashboard">Merchant dashboard</a>: sign in as a member of a merchant's team (the demo owner's email and password were printed at the first start), or with a private key.</li>
<li><a href="/health">Health</a></li>
</ul>`;
    return sendHtmlPage(reply, LANDING_CSP, page('Checkout gateway', body));
  });

  app.get('/graphiql', PAGE, async (_request, reply) => {
    const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>GraphiQL · Checkout gateway</title>
<link rel="stylesheet" href="/graphiql/graphiql.min.css">
<link rel="stylesheet" href="/graphiql/graphiql-page.css">
<script src="/graphiql/react.production.min.js" defer></script>
<script src="/graphiql/react-dom.production.min.js" defer></script>
<script src="/graphiql/graphiql.min.js" defer></script>
<script src="/graphiql/graphql-ws.min.js" defer></script>
<script src="/graphiql/introspection.js" defer></script>
<script src="/graphiql/graphiql-app.js" defer></script>
</head>
<body>
<form id="key-bar" autocomplete="off">
<a href="/">Checkout gateway</a>
<label for="api-key">api-key</label>
<input id="api-key" name="api-key" type="password" spellcheck="false" placeholder="PGW-PUBLICKEY-TEST-… or PGW-SECRETKEY-TEST-…">
<span id="key-note">sent as the api-key header, and in connectionParams for subscriptions; kept in this page only</span>
</form>
<div id="graphiql"></div>
</body>
</html>`;
    return sendHtmlPage(reply, GRAPHIQL_CSP, body);
  });

  app.get<{ Params: { name: string } }>('/graphiql/:name', { config: { quietLog: true } }, async (request, reply) => {
    const name = request.params.name;
    if (name === 'introspection.js') {
      // GraphiQL's bundle carries an older graphql whose introspection query the limits do not
      // recognise as the standard one: the page asks this server's own instead (same answer shape).
      const query = getIntrospectionQuery({ inputValueDeprecation: true, descriptions: true });
      return reply
        .type('text/javascript; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(`window.PGW_INTROSPECTION_QUERY = ${JSON.stringify(query)};\n`);
    }
    const vendored = Object.hasOwn(GRAPHIQL_FILES, name) ? GRAPHIQL_FILES[name] : undefined;
    const own = Object.hasOwn(OWN_FILES, name) ? OWN_FILES[name] : undefined;
    if (!vendored && !own) return reply.code(404).type('text/plain').send('Not found');
    const body = load(name, () => (vendored ? fs.readFileSync(path.join(packageDir(vendored.pkg), vendored.file), 'utf8') : ownFile(name)));
    return reply
      .type(vendored ? vendored.type : own!)
      .header('cache-control', 'public, max-age=3600')
      .send(body);
  });
}
