import { dashboardSummaryOf, type SummaryCell } from '../../../src/orders/order-summary';

const cell = (over: Partial<SummaryCell>): SummaryCell => ({
  day: '2024-03-01',
  currency: 'NGN',
  paymentMethod: 'C',
  statusId: 5,
  count: 1,
  amount: '0',
  fees: '0',
  ...over,
});

describe('dashboard summary figures (orders domain)', () => {
  const from = new Date('2024-03-01T00:00:00Z');
  const to = new Date('2024-03-03T00:00:00Z');

  it('sums amounts and fees as exact decimals by status and currency, with the status names', () => {
    const figures = dashboardSummaryOf(from, to, [
      cell({ amount: '0.1', fees: '0.0015' }),
      cell({ amount: '0.2', fees: '0.0030', day: '2024-03-02' }),
      cell({ statusId: 4, amount: '7.5', fees: '0' }),
      cell({ statusId: 1, currency: 'USD', paymentMethod: '', amount: '3', fees: '0.05' }),
    ]);
    expect(figures.from).toBe(from);
    expect(figures.to).toBe(to);
    expect(figures.byStatus).toEqual([
      { statusId: 1, status: 'Initiated', currency: 'USD', count: 1, amount: '3.00', fees: '0.05' },
      { statusId: 4, status: 'Failed', currency: 'NGN', count: 1, amount: '7.50', fees: '0.00' },
      { statusId: 5, status: 'Successful', currency: 'NGN', count: 2, amount: '0.30', fees: '0.00' },
    ]);
    expect(figures.successRate).toBeCloseTo(2 / 3, 12);
  });

  it('groups by payment method as the order lists show it, and by UTC day, oldest first; successful volume only', () => {
    const figures = dashboardSummaryOf(from, to, [
      cell({ day: '2024-03-02', amount: '10.005' }),
      cell({ amount: '1.10' }),
      cell({ statusId: 4, amount: '99' }),
      cell({ paymentMethod: 'PAYPAL', statusId: 2, amount: '5' }),
    ]);
    expect(figures.byMethod).toEqual([
      { paymentMethod: 'Card Payment', currency: 'NGN', count: 3, successful: 2, failed: 1, successRate: 2 / 3, volume: '11.11' },
      { paymentMethod: 'PayPal', currency: 'NGN', count: 1, successful: 0, failed: 0, successRate: 0, volume: '0.00' },
    ]);
    expect(figures.daily).toEqual([
      { date: '2024-03-01', currency: 'NGN', count: 3, successful: 1, volume: '1.10' },
      { date: '2024-03-02', currency: 'NGN', count: 1, successful: 1, volume: '10.01' },
    ]);
  });

  it('leaves out rows without orders and answers a success rate of 0 when nothing settled', () => {
    const figures = dashboardSummaryOf(from, to, [cell({ statusId: 1, count: 0 })]);
    expect(figures).toEqual({ from, to, byStatus: [], successRate: 0, byMethod: [], daily: [] });
  });
});
