import { Type } from '@sinclair/typebox';
import { Audit, commonErrors, EnvelopeA, Nullable, security } from './common';

/** The bank list. */

const BankRecord = Type.Object({
  name: Type.String(),
  countryId: Type.Integer(),
  bankCode: Type.String(),
  isMicrofinance: Nullable(Type.Boolean()),
  isMortgage: Nullable(Type.Boolean()),
  ussdBankCode: Nullable(Type.String()),
  logo: Type.String(),
  id: Type.Integer(),
  ...Audit,
});

export const bankRouteSchemas = {
  banks: {
    tags: ['Banks'],
    summary: 'List banks',
    security,
    response: { 200: EnvelopeA(Type.Array(BankRecord), ['00'], 'Operation successful', 'The banks.'), ...commonErrors },
  },
};
