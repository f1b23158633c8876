import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { EntityRowMapper, selectColumns, type RowColumns } from '../../../src/db/row-mapper';
import { sqlRunner } from '../../../src/db/sql';
import { AppEnvironment } from '../../../src/merchants/app-environment.entity';

describe('EntityRowMapper reading a chosen set of columns', () => {
  let t: TestService;
  let env: number;

  beforeAll(async () => {
    t = await startTestService();
    const m = await createTestMerchant(t);
    env = (await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey)).environmentId;
  });
  afterAll(async () => {
    await t.close();
  });

  const chosen: RowColumns = { alias: 'e', prefix: 'e_', columns: ['id', 'mode', 'subsidiary_id', 'created_at'] };

  it('selects only the chosen columns, under their prefix', () => {
    expect(selectColumns(chosen)).toBe('e.id as "e_id", e.mode as "e_mode", e.subsidiary_id as "e_subsidiary_id", e.created_at as "e_created_at"');
    expect(new EntityRowMapper(t.service.runtime.ctx.orm, AppEnvironment, chosen).selectList).toBe(selectColumns(chosen));
  });

  it('reads a row of the database as the entity manager holds the entity: values, timestamps, references by id', async () => {
    const orm = t.service.runtime.ctx.orm;
    const mapper = new EntityRowMapper(orm, AppEnvironment, chosen);
    const [row] = await sqlRunner(orm)(`select ${mapper.selectList} from app_environment e where e.id = ?`, [env]);
    const loaded = await orm.em.fork().findOneOrFail(AppEnvironment, { id: env });
    const mapped = mapper.map(row!)!;
    expect(Object.keys(mapped)).toEqual(['id', 'mode', 'subsidiary', 'createdAt']);
    expect(mapped).toEqual({ id: loaded.id, mode: loaded.mode, subsidiary: { id: loaded.subsidiary.id }, createdAt: loaded.createdAt });
    expect(mapped.createdAt).toBeInstanceOf(Date);
  });

  it('gives null for a row without the table (a left join that found nothing)', () => {
    const mapper = new EntityRowMapper(t.service.runtime.ctx.orm, AppEnvironment, chosen);
    expect(mapper.map({ e_id: null, e_mode: null, e_subsidiary_id: null, e_created_at: null })).toBeNull();
    expect(mapper.map({})).toBeNull();
  });

  it('refuses a column the entity does not have when it is made, not when a row is read', () => {
    expect(() => new EntityRowMapper(t.service.runtime.ctx.orm, AppEnvironment, { ...chosen, columns: ['id', 'no_such_column'] })).toThrow(
      'AppEnvironment: no column no_such_column',
    );
  });

  it('reads every persisted column under alias__column when given only a table alias', () => {
    const mapper = new EntityRowMapper(t.service.runtime.ctx.orm, AppEnvironment, 'e');
    expect(mapper.selectList).toContain('e.subsidiary_id as "e__subsidiary_id"');
    expect(mapper.selectList).toContain('e.fee_bearer as "e__fee_bearer"');
  });
});
