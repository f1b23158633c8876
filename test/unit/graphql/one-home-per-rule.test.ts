import fs from 'node:fs';
import path from 'node:path';

const SRC = path.join(__dirname, '..', '..', '..', 'src');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const files = sourceFiles(SRC).map((file) => ({ file: path.relative(SRC, file).split(path.sep).join('/'), text: fs.readFileSync(file, 'utf8') }));
/** The relative modules a file imports at run time (type-only imports left out). */
const runtimeImports = (text: string) => [...text.matchAll(/^\s*(?:import|export)\s+(?!type\s)[^'"]*?from\s+'(\.[^']+)'/gm)].map((m) => m[1]!);
/** The source without comments, so prose about a rule is not taken for a copy of it. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

describe('each GraphQL and adapter rule has one home', () => {
  it('no GraphQL resolver imports another resolver: object mappers live in *.mapping.ts files', () => {
    const offenders = files
      .filter((f) => f.file.startsWith('graphql/'))
      .flatMap((f) =>
        runtimeImports(f.text)
          .filter((m) => /\.resolver$/.test(m) && !(f.file === 'graphql/schema.ts'))
          .map((m) => `${f.file} -> ${m}`),
      );
    expect(offenders).toEqual([]);
  });

  it('the dashboard figures are worked out in the orders domain, not in the GraphQL adapter', () => {
    const graphql = files.filter((f) => f.file.startsWith('graphql/'));
    expect(graphql.filter((f) => /new Money\(0\)|successRate\s*=\s*\(/.test(code(f.text))).map((f) => f.file)).toEqual([]);
    expect(files.find((f) => f.file === 'orders/order-summary.ts')?.text).toMatch(/export function dashboardSummaryOf/);
  });

  it('dashboard sessions are merchant credentials: nothing imports them from the dashboard adapter', () => {
    expect(files.some((f) => f.file === 'merchants/dashboard-session.service.ts')).toBe(true);
    expect(files.filter((f) => /dashboard\/session\.service'|'\.\/session\.service'/.test(f.text)).map((f) => f.file)).toEqual([]);
  });

  it("sockets close with graphql-ws's CloseCode, never a copy of its numbers", () => {
    expect(files.filter((f) => /\b44\d\d\b/.test(code(f.text)) || /KEY_REVOKED_CLOSE_CODE/.test(f.text)).map((f) => f.file)).toEqual([]);
  });

  it('only the authorization module decides what a key or a member is allowed', () => {
    const deciding = files.filter(
      (f) =>
        f.file !== 'merchants/authorization.ts' &&
        /keyKind\s*[!=]==?\s*'private'|requires the private key|member\??\.role\s*[!=]==?|PERMISSIONS\[/.test(code(f.text)),
    );
    // The REST schema's example of the 403 answer is documentation, not a check.
    expect(deciding.map((f) => f.file).filter((file) => !file.startsWith('rest/schemas'))).toEqual([]);
  });

  it("a payment link's address is built only by links/payment-link-url.ts", () => {
    const building = files.filter((f) => f.file !== 'links/payment-link-url.ts' && /[`'"][^`'"\n]*\/pay\/(?!:reference)/.test(code(f.text)));
    // The OpenAPI example of the REST schema is the one literal address, and it is documentation.
    expect(building.map((f) => f.file).filter((file) => !file.startsWith('rest/schemas'))).toEqual([]);
  });
});
