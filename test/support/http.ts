import { encryptPayload } from '../../packages/sdk/src';

export interface HttpResult {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** A thin HTTP client for tests: real requests over loopback, JSON in and out. */
export async function request(
  baseUrl: string,
  method: string,
  path: string,
  options: { apiKey?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.apiKey !== undefined) headers['api-key'] = options.apiKey;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** POSTs `{ data: encrypt(plaintext) }` exactly as a merchant's client would: with the merchant SDK's encryption. */
export function postEncrypted(baseUrl: string, path: string, apiKey: string, encryptionKey: string, plaintext: unknown) {
  return request(baseUrl, 'POST', path, { apiKey, body: { data: encryptPayload(plaintext as object, encryptionKey) } });
}

export async function graphql(
  baseUrl: string,
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: await res.json() };
}
