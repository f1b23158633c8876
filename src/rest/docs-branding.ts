import type { FastifySwaggerUiOptions } from '@fastify/swagger-ui';
import { SERVICE_NAME } from '../shared/package-info';

/** The mark of the service: a card on a rounded square, then its name (Swagger UI's top bar is dark). */
export const SERVICE_LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="230" height="40" viewBox="0 0 230 40" role="img" aria-label="${SERVICE_NAME}">
<rect width="40" height="40" rx="9" fill="#1f6feb"/>
<rect x="8" y="11" width="24" height="18" rx="3" fill="none" stroke="#fff" stroke-width="2.5"/>
<path d="M8 17h24" stroke="#fff" stroke-width="3"/>
<text x="50" y="27" font-family="system-ui, -apple-system, Segoe UI, sans-serif" font-size="19" font-weight="600" fill="#fff">${SERVICE_NAME}</text>
</svg>`;

/** The square mark alone, as the page's icon. */
export const SERVICE_ICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 40 40">
<rect width="40" height="40" rx="9" fill="#1f6feb"/>
<rect x="8" y="11" width="24" height="18" rx="3" fill="none" stroke="#fff" stroke-width="2.5"/>
<path d="M8 17h24" stroke="#fff" stroke-width="3"/>
</svg>`;

/** Swagger UI under this service's name, logo and icon instead of the plugin's defaults (Fastify's logo, "Swagger UI"). */
export const DOCS_BRANDING: Pick<FastifySwaggerUiOptions, 'theme' | 'logo'> = {
  theme: {
    title: `REST API · ${SERVICE_NAME}`,
    favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: SERVICE_ICON_SVG }],
  },
  logo: { type: 'image/svg+xml', content: SERVICE_LOGO_SVG, href: '/', target: '_self' },
};
