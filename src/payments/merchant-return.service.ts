import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { OrderStatus } from '../orders/order-status';

/**
 * The way back from a finished 3-D Secure or PayPal page to the merchant's RedirectUrl, given
 * once per payment attempt. The page's address is public (it travels in URLs and browser
 * history): if finishing it redirected every visitor, it would be an open redirect to the
 * merchant's URL for anyone who has the link. The claim is one conditional UPDATE, so of any
 * number of concurrent answers, on any number of instances, exactly one wins.
 */
export class MerchantReturnService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
  ) {}

  /**
   * Claims the return of the finished payment attempt `paymentReference`: true the first time
   * (the caller sends the customer back), false ever after, and false while it is not finished.
   */
  async claim(paymentReference: string): Promise<boolean> {
    const rows: unknown[] = await this.orm.em
      .getConnection()
      .execute(
        `update "order_payment" set "returned_to_merchant_at" = ? where "reference" = ? and "returned_to_merchant_at" is null and "status_id" in (?, ?, ?, ?) returning "id"`,
        [this.clock.now(), paymentReference, OrderStatus.Successful, OrderStatus.Failed, OrderStatus.Authorized, OrderStatus.Voided],
      );
    return rows.length === 1;
  }
}
