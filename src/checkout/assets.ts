import type { FastifyInstance } from 'fastify';
import { errorBody } from '../protection/failure-shapes';

const PALETTE = ['#0b5fff', '#0f9d58', '#c2185b', '#e65100', '#6a1b9a', '#00838f', '#37474f'];

/**
 * Bank logos: a plain monogram per bank code, generated so the service ships no third-party
 * artwork and needs nothing from outside.
 */
export async function registerAssets(app: FastifyInstance): Promise<void> {
  app.get('/favicon.ico', { config: { quietLog: true } }, async (_request, reply) => reply.code(204).header('cache-control', 'public, max-age=86400').send());

  app.get<{ Params: { code: string } }>('/assets/banks/:code.svg', { config: { quietLog: true } }, async (request, reply) => {
    const code = request.params.code;
    if (!/^[0-9]{3,6}$/.test(code)) return reply.code(404).send(errorBody('404', 'Not found'));
    const colour = PALETTE[Number(code) % PALETTE.length];
    const svg =
      `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` +
      `<rect width="64" height="64" rx="12" fill="${colour}"/>` +
      `<text x="32" y="38" font-family="sans-serif" font-size="14" fill="#fff" text-anchor="middle">${code}</text></svg>`;
    return reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400').send(svg);
  });
}
