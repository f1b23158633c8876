import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { AppContext } from '../app-context';
import { readInput, textOf } from '../shared/input';
import { validationError } from '../shared/errors';
import { authorize } from '../merchants/authorization';
import { orderNotFound } from '../orders/order-status';
import { paymentLinkView } from '../links/payment-link.view';
import type { PaymentLinkInput } from '../links/payment-link-input';
import { formatTimestamp } from '../shared/time';
import { envelopeA } from './envelopes';
import { tenantOf } from './authentication';
import { ok, respond } from './respond';
import { LinkCreateBody, LinkEditBody, routeSchemas } from './schemas';
import { subsidiaryRecord } from './subsidiary.presenter';

function linkInput(body: Static<typeof LinkCreateBody> | Static<typeof LinkEditBody>): PaymentLinkInput {
  return {
    name: textOf(body.Name),
    description: textOf(body.Description),
    paymentType: textOf(body.PaymentType),
    currency: 'Currency' in body ? textOf(body.Currency) : null,
    authOption: textOf(body.AuthOption),
    amount: body.Amount,
    mobile: textOf(body.Mobile),
    backgroundImage: textOf(body.BackgroundImage),
    website: textOf(body.Website),
    limit: body.Limit,
    frequencyId: body.FrequencyId,
    numberOfPayments: body.NumberOfPayments,
  };
}

/** A cancel's message while a renewal's charge is already at the processor (which decides it; the renewal's order shows how it ends). */
const RENEWAL_IN_FLIGHT_MESSAGE = 'Recurring payment cancelled; a renewal already sent to the processor may still be charged';

export async function registerLinkRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { links, recurring } = ctx.services;
  const url = (l: Parameters<typeof links.paymentLinkUrl>[0]) => links.paymentLinkUrl(l);
  const linkAndSubsidiary = (r: Awaited<ReturnType<typeof links.create>>) =>
    envelopeA(
      { paymentLink: paymentLinkView(r.link, url(r.link), 'single'), subsidiary: subsidiaryRecord(r.subsidiary) },
      '00',
      'Payment details fetched successfully',
    );

  app.post('/links/create', { schema: routeSchemas.createLink }, async (request, reply) =>
    respond(ctx, request, reply, request.body, async () =>
      ok(linkAndSubsidiary(await links.create(tenantOf(request), linkInput(readInput(LinkCreateBody, request.body ?? {}))))),
    ),
  );

  app.patch<{ Params: { id: string } }>('/links/:id/edit', { schema: routeSchemas.editLink }, async (request, reply) =>
    respond(ctx, request, reply, request.body, async () =>
      ok(linkAndSubsidiary(await links.edit(tenantOf(request), request.params.id, linkInput(readInput(LinkEditBody, request.body ?? {}))))),
    ),
  );

  for (const [action, isActive, schema] of [
    ['activate', true, routeSchemas.activateLink],
    ['disable', false, routeSchemas.disableLink],
  ] as const) {
    app.patch<{ Params: { id: string } }>(`/links/:id/status/${action}`, { schema }, async (request, reply) =>
      respond(ctx, request, reply, null, async () => {
        await links.setActive(tenantOf(request), request.params.id, isActive);
        return ok(envelopeA(null, '00', 'Payment link status updated successfully'));
      }),
    );
  }

  // The REST face of GraphQL's cancelRecurringPayment: private key only, nothing more is sent to the
  // processor. A renewal already sent is said so in the message (the legacy body keeps its fields).
  app.patch<{ Params: { reference: string } }>(
    '/links/recurringpayment/:reference/cancel',
    { schema: routeSchemas.cancelRecurring },
    async (request, reply) => {
      authorize(tenantOf(request), 'payments.write');
      return respond(ctx, request, reply, null, async () => {
        const r = await recurring.cancel(tenantOf(request), request.params.reference);
        const cancelled = r.state === 'cancelled';
        const message = !cancelled
          ? `Recurring payment already ${r.state}`
          : r.chargeState === 'charging'
            ? RENEWAL_IN_FLIGHT_MESSAGE
            : 'Recurring payment cancelled successfully';
        return ok(envelopeA({ reference: r.reference, state: r.state, cancelled }, '00', message));
      });
    },
  );

  // Thousands of links: PostgreSQL writes the JSON text of the list in the one query that reads
  // them (the same bytes the route's response schema produced from paymentLinkView's list style).
  app.get<{ Querystring: { id?: string } }>('/links/all', { schema: routeSchemas.listLinks }, async (request, reply) => {
    const tenant = tenantOf(request);
    const idText = request.query.id;
    let json: string | null;
    if (idText !== undefined && idText !== '') {
      if (!/^\d{1,9}$/.test(idText)) throw validationError('The id field must be a whole number.');
      json = await links.listJson(tenant, { id: Number(idText) });
      // Code 13's one message, which the legacy interface also answers for list and lookup endpoints.
      if (json === null) throw orderNotFound();
    } else {
      json = (await links.listJson(tenant)) ?? '[]';
    }
    return reply.type('application/json; charset=utf-8').send(json);
  });

  app.get('/links/types', { schema: routeSchemas.linkTypes }, async () => ({
    paymentLinkTypes: (await links.types()).map((t) => ({
      paymentLinkName: t.paymentLinkName,
      description: t.description,
      status: t.status,
      code: t.code,
      id: t.id,
      dateCreated: formatTimestamp(t.dateCreated),
      dateUpdated: formatTimestamp(t.dateUpdated),
      dateDeleted: formatTimestamp(t.dateDeleted),
      createdBy: t.createdBy,
      updatedBy: t.updatedBy,
      deletedBy: t.deletedBy,
    })),
    status: 'success',
    statusCode: '00',
    message: 'Payment link types retrieved successfully',
  }));

  app.get('/frequencies', { schema: routeSchemas.frequencies }, async () =>
    envelopeA(
      (await links.frequencies()).map((f) => ({
        hours: f.hours,
        days: f.days,
        name: f.name,
        description: f.description,
        isActive: f.isActive,
        id: f.id,
        dateCreated: formatTimestamp(f.dateCreated),
        dateUpdated: formatTimestamp(f.dateUpdated),
        dateDeleted: formatTimestamp(f.dateDeleted),
        createdBy: f.createdBy,
        updatedBy: f.updatedBy,
        deletedBy: f.deletedBy,
      })),
      '00',
      'Operation successful',
    ),
  );
}
