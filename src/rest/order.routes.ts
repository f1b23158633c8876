import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import { InputObject, readInput, textOf } from '../shared/input';
import { orderDetailsView } from '../orders/order-details.view';
import { OrderStatus } from '../orders/order-status';
import type { CreateOrderInput } from '../orders/order.service';
import { envelopeA, envelopeB } from './envelopes';
import { tenantOf } from './authentication';
import { readEncryptedBody } from './encrypted-body';
import { feeView, orderCreatedView, orderStatusView, payResultView } from './order.presenters';
import type { PayOrderInput } from '../payments/pay-validation';
import { readPaymentInstrument } from '../payments/pay-validation';
import { DomainError } from '../shared/errors';
import { authorize } from '../merchants/authorization';
import { ok, respond } from './respond';
import { CreateOrderPlaintext, FeePlaintext, PayPlaintext, routeSchemas, StatusPlaintext, TrackPlaintext, VerifyBody } from './schemas';

const PLAINTEXT = 'plaintext';

/** Plaintext of order/create, read by its schema. */
function createOrderInput(plaintext: Record<string, unknown>): CreateOrderInput {
  const { customer, order, payment, paymentMeta } = readInput(CreateOrderPlaintext, plaintext, PLAINTEXT);
  return {
    customer: {
      firstname: textOf(customer.firstname),
      lastname: textOf(customer.lastname),
      mobile: textOf(customer.mobile),
      country: textOf(customer.country),
      email: textOf(customer.email),
    },
    order: { amount: order.amount, reference: textOf(order.reference), description: textOf(order.description), currency: textOf(order.currency) },
    payment: {
      redirectUrl: textOf(payment.RedirectUrl),
      paymentLinkId: payment.paymentLinkId,
      frequencyId: payment.frequencyId,
      numberOfPayments: payment.numberOfPayments,
    },
    paymentMeta: paymentMeta ? { ipAddress: textOf(paymentMeta.ipAddress) } : null,
  };
}

/** Plaintext of order/pay, read by its schema; the card or PayPal part by the one reader all adapters share. */
export function payOrderInput(plaintext: Record<string, unknown>): PayOrderInput {
  const p = readInput(PayPlaintext, plaintext, PLAINTEXT);
  return {
    reference: textOf(p.reference),
    paymentOption: textOf(p.paymentOption),
    country: textOf(p.country),
    ...readPaymentInstrument(InputObject.from(p)),
  };
}

/** The order endpoints (registered under each base path of the shim: /checkout and its alias /payment). */
export async function registerOrderRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { orders, fees, timeline } = ctx.services;

  app.post('/order/create', { schema: routeSchemas.createOrder }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const created = await orders.create(tenantOf(request), createOrderInput(plaintext));
      return ok(envelopeA(orderCreatedView(created, created.subsidiary.paypalEnabled), '01', 'Created order successfully'));
    });
  });

  app.post('/order/fee', { schema: routeSchemas.fee }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const input = readInput(FeePlaintext, plaintext, PLAINTEXT);
      const quote = await fees.quote(tenantOf(request), { amount: input.amount, paymentOption: textOf(input.paymentOption), currency: textOf(input.currency) });
      return ok(envelopeA(feeView(quote), '00', 'Operation successful'));
    });
  });

  app.post('/order/status', { schema: routeSchemas.status }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const input = readInput(StatusPlaintext, plaintext, PLAINTEXT);
      const tenant = tenantOf(request);
      const { record, extras } = orderStatusView(await orders.getStatus(tenant, textOf(input.reference)), tenant.subsidiaryId);
      return ok(envelopeB(record, 'Order Status fetched successfully', extras));
    });
  });

  app.post('/order/event/track', { schema: routeSchemas.track }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const input = readInput(TrackPlaintext, plaintext, PLAINTEXT);
      await timeline.track(tenantOf(request), {
        orderReference: textOf(input.orderReference),
        event: textOf(input.event),
        description: textOf(input.description),
        metadata: input.metadata,
      });
      return ok(envelopeA(null, '00', 'Event logged successfully'));
    });
  });

  app.post('/order/pay', { schema: routeSchemas.pay }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    const input = payOrderInput(plaintext);
    // The whole plaintext, card included: another card with the same last four digits and expiry
    // is another request. Only its keyed HMAC is stored (IdempotencyService.fingerprint).
    return respond(ctx, request, reply, plaintext, async () => {
      const result = await ctx.services.payments.pay(tenantOf(request), input);
      if (!result.final) return ok(envelopeA(payResultView(result), '02', 'pending-authenticaion'));
      const { order } = result.aggregate;
      if (order.statusId === OrderStatus.Successful) return ok(envelopeA(payResultView(result), '00', 'Order payment successful'));
      // Held for the merchant to capture later (a MANUAL payment link's order): approved, not yet taken.
      if (order.statusId === OrderStatus.Authorized) return ok(envelopeA(payResultView(result), '00', 'Order payment authorized'));
      throw new DomainError('payment_declined', order.paymentResponseMessage ?? 'Payment declined', order.paymentResponseCode ?? '05');
    });
  });

  app.post('/order/verify', { schema: routeSchemas.verify }, async (request, reply) => {
    authorize(tenantOf(request), 'read');
    return respond(ctx, request, reply, request.body, async () => {
      const input = readInput(VerifyBody, request.body ?? {});
      const details = await orders.getDetails(tenantOf(request), textOf(input.reference));
      return ok(envelopeA(orderDetailsView(details, ctx.config.publicUrl), '00', 'Order details fetched successfully'));
    });
  });
}
