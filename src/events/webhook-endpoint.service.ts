import type { MikroORM } from '@mikro-orm/postgresql';
import { forbidden } from '../shared/errors';
import type { Tenant } from '../merchants/tenant';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { validateWebhookUrl, type WebhookUrlPolicy } from './webhook-url';

/** The merchant's webhook URL of one environment (merchant settings: private key only). */
export class WebhookEndpointService {
  constructor(
    private readonly orm: MikroORM,
    private readonly policy: WebhookUrlPolicy,
  ) {}

  /** The environment's active webhook URL, or null. */
  async getWebhookUrl(tenant: Tenant): Promise<string | null> {
    const endpoint = await this.orm.em.fork().findOne(WebhookEndpoint, { environment: tenant.environmentId, isActive: true });
    return endpoint?.url ?? null;
  }

  /**
   * Sets the environment's webhook URL (validated by the webhook URL rules, its host resolved
   * and refused when it names an internal address), or removes it
   * with null or an empty string. Events committed from then on are delivered to the new URL;
   * deliveries already pending keep the URL they were created with. Returns the URL now in force.
   */
  async setWebhookUrl(tenant: Tenant, url: string | null): Promise<string | null> {
    if (tenant.keyKind !== 'private') throw forbidden('This operation requires the private key.');
    const value = url === null || url.trim() === '' ? null : await validateWebhookUrl(url, this.policy);
    const connection = this.orm.em.getConnection();
    if (value === null) {
      await connection.execute('update webhook_endpoint set is_active = false, updated_at = now() where environment_id = ?', [tenant.environmentId]);
      return null;
    }
    // One statement: concurrent updates of one environment cannot trip over the unique constraint.
    await connection.execute(
      `insert into webhook_endpoint (environment_id, url, is_active) values (?, ?, true)
       on conflict (environment_id) do update set url = excluded.url, is_active = true, updated_at = now()`,
      [tenant.environmentId, value],
    );
    return value;
  }
}
