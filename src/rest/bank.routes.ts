import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import type { Bank } from '../banks/bank.entity';
import { formatTimestamp } from '../shared/time';
import { envelopeA } from './envelopes';
import { routeSchemas } from './schemas';

export async function registerBankRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { banks } = ctx.services;
  const present = (b: Bank) => ({
    name: b.name,
    countryId: b.countryId,
    bankCode: b.bankCode,
    isMicrofinance: b.isMicrofinance,
    isMortgage: b.isMortgage,
    ussdBankCode: b.ussdBankCode,
    logo: banks.logoUrl(b),
    id: b.id,
    dateCreated: formatTimestamp(b.dateCreated),
    dateUpdated: formatTimestamp(b.dateUpdated),
    dateDeleted: formatTimestamp(b.dateDeleted),
    createdBy: b.createdBy,
    updatedBy: b.updatedBy,
    deletedBy: b.deletedBy,
  });

  app.get('/banks', { schema: routeSchemas.banks }, async () => envelopeA((await banks.list()).map(present), '00', 'Operation successful'));
}
