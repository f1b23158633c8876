import type { MikroORM } from '@mikro-orm/postgresql';
import type { Tenant } from './tenant';
import { authorize, lockAuthorized } from './authorization';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { validateWebhookUrl, type WebhookUrlPolicy } from './webhook-url';
import { AuditActions, type AuditService } from './audit/audit.service';
import type { TenantCaches } from './tenant-cache';

/** The merchant's webhook URL of one environment (a developer's setting; a private key without an expiry). */
export class WebhookEndpointService {
  constructor(
    private readonly orm: MikroORM,
    private readonly policy: WebhookUrlPolicy,
    private readonly audit: AuditService,
    /**
     * Dropped for the environment once a change committed: here, and on every other instance
     * through the event fan-out (LISTEN hears webhook_endpoint's trigger; Redis is told).
     */
    private readonly caches?: Pick<TenantCaches, 'invalidate'>,
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
    authorize(tenant, 'developers', { manages: true });
    const value = url === null || url.trim() === '' ? null : await validateWebhookUrl(url, this.policy);
    const set = await this.orm.em.fork().transactional(async (em) => {
      // Locks the environment (so updates of one environment take turns) and re-checks the key.
      await lockAuthorized(em, tenant, 'developers', { manages: true });
      const run = (sql: string, params: unknown[]) => em.getConnection().execute(sql, params, 'run', em.getTransactionContext());
      await this.audit.recordFor(em, tenant, AuditActions.webhookUrlSet, value ?? 'none');
      if (value === null) {
        await run('update webhook_endpoint set is_active = false, updated_at = now() where environment_id = ?', [tenant.environmentId]);
        return null;
      }
      await run(
        `insert into webhook_endpoint (environment_id, url, is_active) values (?, ?, true)
         on conflict (environment_id) do update set url = excluded.url, is_active = true, updated_at = now()`,
        [tenant.environmentId, value],
      );
      return value;
    });
    this.caches?.invalidate({ environmentId: tenant.environmentId });
    return set;
  }
}
