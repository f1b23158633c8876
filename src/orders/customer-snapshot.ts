import type { Order } from './order.entity';

export interface CustomerSnapshot {
  email: string;
  firstName: string;
  lastName: string;
  mobile: string;
  country: string;
}

/**
 * The customer as the order was created with: what every read of the order shows. Orders
 * written before snapshots existed fall back to the customer record.
 */
export function customerSnapshotOf(order: Order): CustomerSnapshot | null {
  if (order.customerEmail !== null) {
    return {
      email: order.customerEmail,
      firstName: order.customerFirstName ?? '',
      lastName: order.customerLastName ?? '',
      mobile: order.customerMobile ?? '',
      country: (order.customerCountry ?? '').trim(),
    };
  }
  const c = order.customer;
  return c ? { email: c.email, firstName: c.firstName, lastName: c.lastName, mobile: c.mobile, country: c.country } : null;
}
