import { selectColumns, type RowColumns } from '../db/row-mapper';

/**
 * The columns every hand-written read of payment links selects (alias `l`), as one definition
 * for every reader: the link lists here, and the link of each row of an order list page, which
 * selects the same columns under the prefix `l_` (see `linkRowAs`). A column added here reaches
 * both, so an order's `paymentLink` and the link lists never disagree on what they show.
 */
export const LINK_ROW: RowColumns = {
  alias: 'l',
  prefix: '',
  columns: [
    'id',
    'environment_id',
    'name',
    'description',
    'reference',
    'amount',
    'currency',
    'auth_option',
    'capture_method',
    'mobile',
    'background_image',
    'website',
    'logo',
    'customer_limit',
    'frequency_id',
    'number_of_payments',
    'is_active',
    'date_created',
    'date_updated',
  ],
};

/** The link type's columns (alias `t`, prefix `t_`) read beside a link. */
export const LINK_TYPE_ROW: RowColumns = { alias: 't', prefix: 't_', columns: ['id', 'code', 'payment_link_name'] };

/** LINK_ROW under another prefix, for a row that also holds another table's columns. */
export function linkRowAs(prefix: string): RowColumns {
  return { ...LINK_ROW, prefix };
}

/** Every column a link list row reads (the link and its type). */
export const LINK_COLUMNS = `${selectColumns(LINK_ROW)}, ${selectColumns(LINK_TYPE_ROW)}`;
