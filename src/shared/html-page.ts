import type { FastifyReply } from 'fastify';

/**
 * Sends one of the service's own HTML pages: never cached, never framed, no referrer, and the
 * page's Content Security Policy. The landing page, GraphiQL and the dashboard share it.
 */
export function sendHtmlPage(reply: FastifyReply, csp: string, body: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', csp)
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .send(body);
}
