import { Money } from '../shared/money';
import { ORDER_STATUS_NAMES, OrderStatus } from './order-status';
import { shownPaymentMethod } from './order-filter';

/** One (UTC day, currency, payment method, status) cell of the dashboard figures. */
export interface SummaryCell {
  day: string;
  currency: string;
  paymentMethod: string;
  statusId: number;
  count: number;
  amount: string;
  fees: string;
}

/** Orders of one status and currency: how many, and the sums of their amounts and fees. */
export interface StatusFigures {
  statusId: number;
  status: string;
  currency: string;
  count: number;
  amount: string;
  fees: string;
}

/** Orders of one payment method (as the order lists show it) and currency. */
export interface MethodFigures {
  paymentMethod: string;
  currency: string;
  count: number;
  successful: number;
  failed: number;
  /** successful / (successful + failed), 0 when none. */
  successRate: number;
  /** The sum of the amounts of the successful orders. */
  volume: string;
}

/** Orders of one UTC day and currency. */
export interface DailyFigures {
  /** YYYY-MM-DD, UTC. */
  date: string;
  currency: string;
  count: number;
  successful: number;
  /** The sum of the amounts of the successful orders. */
  volume: string;
}

/** The dashboard's figures over [from, to). Money as exact decimal strings with two places. */
export interface DashboardSummary {
  from: Date;
  to: Date;
  byStatus: StatusFigures[];
  /** Successful orders / settled (successful + failed) orders, 0 when none. */
  successRate: number;
  byMethod: MethodFigures[];
  daily: DailyFigures[];
}

const successRate = (successful: number, failed: number) => (successful + failed === 0 ? 0 : successful / (successful + failed));
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The dashboard's figures from the summary cells (exact decimals throughout): by status and
 * currency, by payment method and currency, by UTC day and currency; rows without orders are
 * left out, each list in a fixed order.
 */
export function dashboardSummaryOf(from: Date, to: Date, cells: SummaryCell[]): DashboardSummary {
  const status = new Map<string, { statusId: number; currency: string; count: number; amount: Money; fees: Money }>();
  const method = new Map<string, { paymentMethod: string; currency: string; count: number; successful: number; failed: number; volume: Money }>();
  const daily = new Map<string, { date: string; currency: string; count: number; successful: number; volume: Money }>();
  for (const c of cells) {
    const s = status.get(`${c.statusId}|${c.currency}`) ?? { statusId: c.statusId, currency: c.currency, count: 0, amount: new Money(0), fees: new Money(0) };
    s.count += c.count;
    s.amount = s.amount.plus(c.amount);
    s.fees = s.fees.plus(c.fees);
    status.set(`${c.statusId}|${c.currency}`, s);
    const shown = shownPaymentMethod(c.paymentMethod);
    const m = method.get(`${shown}|${c.currency}`) ?? { paymentMethod: shown, currency: c.currency, count: 0, successful: 0, failed: 0, volume: new Money(0) };
    const d = daily.get(`${c.day}|${c.currency}`) ?? { date: c.day, currency: c.currency, count: 0, successful: 0, volume: new Money(0) };
    m.count += c.count;
    d.count += c.count;
    if (c.statusId === OrderStatus.Successful) {
      m.successful += c.count;
      m.volume = m.volume.plus(c.amount);
      d.successful += c.count;
      d.volume = d.volume.plus(c.amount);
    } else if (c.statusId === OrderStatus.Failed) {
      m.failed += c.count;
    }
    method.set(`${shown}|${c.currency}`, m);
    daily.set(`${c.day}|${c.currency}`, d);
  }
  const byStatus = [...status.values()].filter((s) => s.count !== 0).sort((a, b) => a.statusId - b.statusId || byText(a.currency, b.currency));
  const count = (statusId: number) => byStatus.filter((r) => r.statusId === statusId).reduce((n, r) => n + r.count, 0);
  return {
    from,
    to,
    byStatus: byStatus.map((r) => ({
      statusId: r.statusId,
      status: ORDER_STATUS_NAMES[r.statusId] ?? 'Unknown',
      currency: r.currency,
      count: r.count,
      amount: r.amount.toFixed(2),
      fees: r.fees.toFixed(2),
    })),
    successRate: successRate(count(OrderStatus.Successful), count(OrderStatus.Failed)),
    byMethod: [...method.values()]
      .filter((m) => m.count !== 0)
      .sort((a, b) => byText(a.paymentMethod, b.paymentMethod) || byText(a.currency, b.currency))
      .map((m) => ({ ...m, successRate: successRate(m.successful, m.failed), volume: m.volume.toFixed(2) })),
    daily: [...daily.values()]
      .filter((d) => d.count !== 0)
      .sort((a, b) => byText(a.date, b.date) || byText(a.currency, b.currency))
      .map((d) => ({ ...d, volume: d.volume.toFixed(2) })),
  };
}
