import type { MikroORM } from '@mikro-orm/postgresql';
import { Bank } from './bank.entity';

/** Bank reference data. Logos are stored as paths and served by this service under PUBLIC_URL. */
export class BankService {
  constructor(
    private readonly orm: MikroORM,
    private readonly publicUrl: string,
  ) {}

  async list(): Promise<Bank[]> {
    const banks = await this.orm.em.fork().find(Bank, { dateDeleted: null }, { orderBy: { id: 'asc' } });
    return banks;
  }

  logoUrl(bank: Bank): string {
    return bank.logo.startsWith('/') ? `${this.publicUrl}${bank.logo}` : bank.logo;
  }
}
