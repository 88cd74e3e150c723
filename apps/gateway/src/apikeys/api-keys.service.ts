import { decodeCursor, DomainError, ErrorCode, IdPrefix, isId, Logger, newId, Page, PageQuery, pageSize, toPage, validateInput } from '@crm/common';
import { ApiKeyCreatedData, ApiKeyRevokedData, EventType } from '@crm/contracts';
import { OutboxService } from '@crm/messaging';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { Principal } from '../http/request-context';
import { LOGGER } from '../tokens';
import { ApiKey } from './api-key.entity';
import { ApiKeyView, presentApiKey } from './api-key.presenter';
import { API_KEY_SHAPE, generateApiKey, hashApiKey, sameHash } from './api-key.secret';
import { CreateApiKeyDto } from './dto/create-api-key.dto';

export type AuthResult = { ok: true; principal: Principal } | { ok: false; message: string };

const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeysService {
  /** last_used_at is written at most once a minute per key, not on every request. */
  private readonly lastTouched = new Map<string, number>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    @Inject(GATEWAY_CONFIG) private readonly config: Pick<GatewayConfig, 'keyEnvironment'>,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async create(input: unknown): Promise<{ data: ApiKeyView & { key: string } }> {
    const dto = validateInput(CreateApiKeyDto, input);
    let expiresAt: Date | null = null;
    if (dto.expires_at !== undefined) {
      expiresAt = new Date(dto.expires_at);
      if (expiresAt.getTime() <= Date.now()) throw DomainError.invalid('expires_at', 'expires_at must be in the future');
    }
    const secret = generateApiKey(this.config.keyEnvironment);
    const key = await this.insert(secret, dto.name, dto.scope, expiresAt);
    return { data: { ...presentApiKey(key), key: secret } };
  }

  async list(query: unknown): Promise<Page<ApiKeyView>> {
    const q = validateInput(PageQuery, query, 'query');
    const after = decodeCursor<string>('apikeys', q.cursor, 'string');
    const size = pageSize(q);
    const qb = this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .where('k.revoked_at IS NULL')
      .orderBy('k.id', 'ASC')
      .limit(size + 1);
    if (after) qb.andWhere('k.id > :after', { after });
    return toPage('apikeys', await qb.getMany(), size, (k) => k.id, presentApiKey);
  }

  async revoke(id: string): Promise<void> {
    if (!isId(id, IdPrefix.ApiKey)) throw DomainError.notFound('API key', id);
    const revoked = await this.dataSource.transaction(async (manager) => {
      const result = await manager
        .createQueryBuilder()
        .update(ApiKey)
        .set({ revokedAt: () => 'now()' })
        .where({ id, revokedAt: IsNull() })
        .execute();
      if (!result.affected) return false;
      await this.outbox.append<ApiKeyRevokedData>(manager, EventType.ApiKeyRevoked, { key_id: id });
      return true;
    });
    if (!revoked) throw DomainError.notFound('API key', id);
  }

  /** Resolves a presented key. Every request reads the database, so revocation is immediate on all replicas. */
  async authenticate(presented: string | undefined): Promise<AuthResult> {
    if (!presented) return { ok: false, message: 'Missing API key: send it in the X-Api-Key header.' };
    const shape = API_KEY_SHAPE.exec(presented);
    if (!shape) return { ok: false, message: 'Invalid API key.' };
    if (shape[1] !== this.config.keyEnvironment) {
      return { ok: false, message: `This is a ${shape[1]} key; this deployment accepts ${this.config.keyEnvironment} keys.` };
    }
    const hash = hashApiKey(presented);
    // On every request: a plain indexed query, without the ORM's per-call query building.
    const [key]: { id: string; scope: ApiKey['scope']; key_hash: string; revoked: boolean; expired: boolean }[] = await this.dataSource.query(
      `SELECT id, scope, key_hash, revoked_at IS NOT NULL AS revoked, coalesce(expires_at <= now(), false) AS expired
       FROM api_keys WHERE key_hash = $1`,
      [hash],
    );
    if (!key || !sameHash(key.key_hash, hash)) return { ok: false, message: 'Invalid API key.' };
    if (key.revoked) return { ok: false, message: 'This API key has been revoked.' };
    if (key.expired) return { ok: false, message: 'This API key has expired.' };
    this.touch(key.id);
    return { ok: true, principal: { keyId: key.id, scope: key.scope } };
  }

  /** Makes sure the operator-supplied key exists as a read-write key named `bootstrap`. */
  async ensureBootstrapKey(secret: string): Promise<void> {
    const existing = await this.dataSource.getRepository(ApiKey).findOne({ where: { keyHash: hashApiKey(secret) } });
    if (existing) {
      if (existing.revokedAt) this.logger.error({ key_id: existing.id }, 'CRM_BOOTSTRAP_API_KEY was revoked and stays revoked; set a new value');
      return;
    }
    await this.insert(secret, 'bootstrap', 'read-write', null);
    this.logger.info('bootstrap API key created from CRM_BOOTSTRAP_API_KEY');
  }

  private async insert(secret: string, name: string, scope: ApiKey['scope'], expiresAt: Date | null): Promise<ApiKey> {
    const key = await this.dataSource.transaction(async (manager: EntityManager) => {
      const row = manager.create(ApiKey, {
        id: newId(IdPrefix.ApiKey),
        name,
        scope,
        keyHash: hashApiKey(secret),
        last4: secret.slice(-4),
        environment: this.config.keyEnvironment,
        expiresAt,
        revokedAt: null,
        lastUsedAt: null,
      });
      const inserted = await manager
        .createQueryBuilder()
        .insert()
        .into(ApiKey)
        .values(row)
        .orIgnore()
        .returning('*')
        .execute();
      if (!inserted.raw.length) throw new DomainError(ErrorCode.Conflict, 'An identical API key already exists.');
      const saved = await manager.findOneOrFail(ApiKey, { where: { id: row.id } });
      await this.outbox.append<ApiKeyCreatedData>(manager, EventType.ApiKeyCreated, {
        key_id: saved.id,
        name: saved.name,
        scope: saved.scope,
        last4: saved.last4,
      });
      return saved;
    });
    return key;
  }

  private touch(keyId: string): void {
    const now = Date.now();
    if (now - (this.lastTouched.get(keyId) ?? 0) < LAST_USED_RESOLUTION_MS) return;
    this.lastTouched.set(keyId, now);
    this.dataSource
      .query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, [keyId])
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not record API key use'));
  }
}
