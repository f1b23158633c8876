import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import { InputObject } from '../shared/input';
import { orderDetailsView } from '../orders/order-details.view';
import type { CreateOrderInput } from '../orders/order.service';
import { envelopeA, envelopeB } from './envelopes';
import { tenantOf } from './authentication';
import { readEncryptedBody } from './encrypted-body';
import { feeView, orderCreatedView, orderStatusView, payResultView } from './order.presenters';
import type { PayOrderInput } from '../payments/payment.service';
import { readPaymentInstrument } from '../payments/pay-input';
import { DomainError } from '../shared/errors';
import { ok, respond } from './respond';
import { routeSchemas } from './schemas';

/** Plaintext of order/create (contract section 4), read case-insensitively. */
function createOrderInput(plaintext: Record<string, unknown>): CreateOrderInput {
  const root = InputObject.from(plaintext).allowOnly(['customer', 'order', 'payment', 'paymentMeta']);
  const customer = root.optionalObject('customer')?.allowOnly(['firstname', 'lastname', 'mobile', 'country', 'email']);
  const order = root.optionalObject('order')?.allowOnly(['amount', 'reference', 'description', 'currency']);
  const payment = root.optionalObject('payment')?.allowOnly(['RedirectUrl', 'paymentLinkId', 'frequencyId', 'numberOfPayments']);
  const meta = root.optionalObject('paymentMeta')?.allowOnly(['ipAddress']);
  return {
    customer: customer && {
      firstname: customer.optionalString('firstname', 100),
      lastname: customer.optionalString('lastname', 100),
      mobile: customer.optionalString('mobile', 40),
      country: customer.optionalString('country', 10),
      email: customer.optionalString('email', 320),
    },
    order: order && {
      amount: order.raw('amount'),
      reference: order.optionalString('reference', 100),
      description: order.optionalString('description', 2000),
      currency: order.optionalString('currency', 10),
    },
    payment: payment && {
      redirectUrl: payment.optionalString('RedirectUrl', 2000),
      paymentLinkId: payment.raw('paymentLinkId'),
      frequencyId: payment.raw('frequencyId'),
      numberOfPayments: payment.raw('numberOfPayments'),
    },
    paymentMeta: meta && { ipAddress: meta.optionalString('ipAddress', 64) },
  };
}

/** Plaintext of order/pay (contract section 4). */
export function payOrderInput(plaintext: Record<string, unknown>): PayOrderInput {
  const root = InputObject.from(plaintext).allowOnly(['reference', 'paymentOption', 'country', 'card', 'paypal']);
  return {
    reference: root.optionalString('reference', 100),
    paymentOption: root.optionalString('paymentOption', 20),
    country: root.optionalString('country', 10),
    ...readPaymentInstrument(root),
  };
}

/** Route config of Encrypted endpoints: a body that is not `{ data }` gets the documented encrypted-data error. */
const ENCRYPTED = { encrypted: true };

export async function registerOrderRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { orders, fees, timeline, auth } = ctx.services;

  app.post('/order/create', { schema: routeSchemas.createOrder, config: ENCRYPTED }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const created = await orders.create(tenantOf(request), createOrderInput(plaintext));
      return ok(envelopeA(orderCreatedView(created, created.subsidiary.paypalEnabled), '01', 'Created order successfully'));
    });
  });

  app.post('/order/fee', { schema: routeSchemas.fee, config: ENCRYPTED }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const input = InputObject.from(plaintext).allowOnly(['amount', 'paymentOption', 'currency']);
      const quote = await fees.quote(tenantOf(request), {
        amount: input.raw('amount'),
        paymentOption: input.optionalString('paymentOption', 20),
        currency: input.optionalString('currency', 10),
      });
      return ok(envelopeA(feeView(quote), '00', 'Operation successful'));
    });
  });

  app.post('/order/status', { schema: routeSchemas.status, config: ENCRYPTED }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const input = InputObject.from(plaintext).allowOnly(['reference']);
      const aggregate = await orders.getAggregate(tenantOf(request), input.optionalString('reference', 100));
      const { record, extras } = orderStatusView(aggregate);
      return ok(envelopeB(record, 'Order Status fetched successfully', extras));
    });
  });

  app.post('/order/event/track', { schema: routeSchemas.track, config: ENCRYPTED }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    return respond(ctx, request, reply, plaintext, async () => {
      const input = InputObject.from(plaintext).allowOnly(['orderReference', 'event', 'description', 'metadata']);
      await timeline.track(tenantOf(request), {
        orderReference: input.optionalString('orderReference', 100),
        event: input.optionalString('event', 100),
        description: input.optionalString('description', 2000),
        metadata: input.raw('metadata'),
      });
      return ok(envelopeA(null, '00', 'Event logged successfully'));
    });
  });

  app.post('/order/pay', { schema: routeSchemas.pay, config: ENCRYPTED }, async (request, reply) => {
    const plaintext = await readEncryptedBody(request, ctx.services);
    // The fingerprint never holds card data, not even hashed: only what identifies the attempt.
    const input = payOrderInput(plaintext);
    const fingerprint = {
      reference: input.reference,
      option: input.paymentOption,
      card: input.card ? `${input.card.cardNumber?.slice(-4)}/${input.card.expiryMonth}/${input.card.expiryYear}` : null,
      paypal: input.paypal?.fullName ?? null,
    };
    return respond(ctx, request, reply, fingerprint, async () => {
      const result = await ctx.services.payments.pay(tenantOf(request), input);
      if (!result.final) return ok(envelopeA(payResultView(result), '02', 'pending-authenticaion'));
      const { order } = result.aggregate;
      if (order.statusId === 5) return ok(envelopeA(payResultView(result), '00', 'Order payment successful'));
      throw new DomainError('payment_declined', order.paymentResponseMessage ?? 'Payment declined', order.paymentResponseCode ?? '05');
    });
  });

  app.post('/order/verify', { schema: routeSchemas.verify }, async (request, reply) => {
    auth.requirePrivateKey(tenantOf(request));
    return respond(ctx, request, reply, request.body, async () => {
      const input = InputObject.from(request.body ?? {}).allowOnly(['reference']);
      const aggregate = await orders.getAggregate(tenantOf(request), input.optionalString('reference', 100));
      return ok(envelopeA(orderDetailsView(aggregate, ctx.config.publicUrl), '00', 'Order details fetched successfully'));
    });
  });
}
