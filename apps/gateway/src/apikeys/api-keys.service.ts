import { CursorCodec, DomainError, ErrorCode, IdPrefix, idKey, isId, Logger, newId, Page, PageQuery, pageSize, toPage, validateInput } from '@crm/common';
import { ChangeOrigin, EventType, permissionProblem, RequestContext, SCOPE_PERMISSIONS } from '@crm/contracts';
import { originOf, OutboxService, systemOrigin, withOrigin } from '@crm/messaging';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { DataSource, EntityManager, IsNull } from 'typeorm';
import { GATEWAY_CONFIG, GatewayConfig } from '../config';
import { LOGGER } from '../tokens';
import { ApiKey } from './api-key.entity';
import { ApiKeyView, permissionsOf, presentApiKey } from './api-key.presenter';
import { generateApiKey, hashApiKey } from './api-key.secret';
import { CreateApiKeyDto } from './dto/create-api-key.dto';
import { checkGrant, checkRevoke, expiryWithin, Grantor } from './grant-ceiling';
import { KeyRevocations } from './key-revocations';
import { TeamDirectory } from './team-directory';

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly outbox: OutboxService,
    private readonly cursors: CursorCodec,
    @Inject(GATEWAY_CONFIG) private readonly config: Pick<GatewayConfig, 'keyEnvironment'>,
    @Inject(LOGGER) private readonly logger: Logger,
    /** Absent in the command-line tool, which creates keys without a user. */
    @Optional() private readonly team?: TeamDirectory,
    /** Absent in the command-line tool, which announces its revocations itself. */
    @Optional() private readonly revocations?: KeyRevocations,
  ) {}

  /** `grantor` is the calling key or token, whose permissions and expiry bound the new key's; the command-line tool has none. */
  async create(ctx: RequestContext, input: unknown, grantor?: Grantor): Promise<{ data: ApiKeyView & { key: string } }> {
    const dto = validateInput(CreateApiKeyDto, input);
    const scopes = permissionsRequested(dto);
    if (grantor) checkGrant(grantor, scopes ?? SCOPE_PERMISSIONS[dto.scope!], dto.user_id);
    if (dto.user_id) {
      if (!this.team) throw DomainError.invalid('user_id', 'Keys with a user_id are created through the API.');
      await this.team.requireUser(ctx, dto.user_id);
    }
    let expiresAt: Date | null = null;
    if (dto.expires_at !== undefined) {
      expiresAt = new Date(dto.expires_at);
      if (expiresAt.getTime() <= Date.now()) throw DomainError.invalid('expires_at', 'expires_at must be in the future');
    }
    expiresAt = expiryWithin(grantor, expiresAt);
    const secret = generateApiKey(this.config.keyEnvironment);
    const key = await withOrigin(keyOrigin(ctx), () => this.insert(secret, dto.name, dto.scope ?? 'custom', expiresAt, dto.user_id ?? null, scopes));
    return { data: { ...presentApiKey(key), key: secret } };
  }

  async list(query: unknown): Promise<Page<ApiKeyView>> {
    const q = validateInput(PageQuery, query, 'query');
    const after = this.cursors.decode('apikeys', q.cursor, idKey(IdPrefix.ApiKey));
    const size = pageSize(q);
    const qb = this.dataSource
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .where('k.revoked_at IS NULL')
      .orderBy('k.id', 'ASC')
      .limit(size + 1);
    if (after) qb.andWhere('k.id > :after', { after });
    return toPage(this.cursors, 'apikeys', await qb.getMany(), size, (k) => k.id, presentApiKey);
  }

  /** `ctx` and `grantor` are the request's, the caller's permissions bounding what it may revoke; the command-line tool has neither. */
  async revoke(id: string, ctx?: RequestContext, grantor?: Grantor): Promise<void> {
    if (!isId(id, IdPrefix.ApiKey)) throw DomainError.notFound('API key', id);
    const revoked = await withOrigin(keyOrigin(ctx), () =>
      this.dataSource.transaction(async (manager) => {
        if (grantor) {
          // Locked, so the key judged is the key revoked.
          const target = await manager.findOne(ApiKey, { where: { id, revokedAt: IsNull() }, lock: { mode: 'pessimistic_write' } });
          if (!target) return false;
          checkRevoke(grantor, permissionsOf(target));
        }
        const result = await manager
          .createQueryBuilder()
          .update(ApiKey)
          .set({ revokedAt: () => 'now()' })
          .where({ id, revokedAt: IsNull() })
          .execute();
        if (!result.affected) return false;
        await this.outbox.append(manager, EventType.ApiKeyRevoked, { key_id: id });
        return true;
      }),
    );
    if (!revoked) throw DomainError.notFound('API key', id);
    await this.revocations?.announce(id);
  }

  /** Makes sure the operator-supplied key exists as a read-write key named `bootstrap`. */
  async ensureBootstrapKey(secret: string): Promise<void> {
    const existing = await this.dataSource.getRepository(ApiKey).findOne({ where: { keyHash: hashApiKey(secret) } });
    if (existing) {
      if (existing.revokedAt) this.logger.error({ key_id: existing.id }, 'CRM_BOOTSTRAP_API_KEY was revoked and stays revoked; set a new value');
      return;
    }
    await withOrigin(systemOrigin('bootstrap'), () => this.insert(secret, 'bootstrap', 'read-write', null, null));
    this.logger.info('bootstrap API key created from CRM_BOOTSTRAP_API_KEY');
  }

  private async insert(
    secret: string,
    name: string,
    scope: ApiKey['scope'],
    expiresAt: Date | null,
    userId: string | null,
    scopes: string[] | null = null,
  ): Promise<ApiKey> {
    const key = await this.dataSource.transaction(async (manager: EntityManager) => {
      const row = manager.create(ApiKey, {
        id: newId(IdPrefix.ApiKey),
        name,
        scope,
        scopes,
        keyHash: hashApiKey(secret),
        last4: secret.slice(-4),
        environment: this.config.keyEnvironment,
        expiresAt,
        userId,
        revokedAt: null,
        lastUsedAt: null,
      });
      const inserted = await manager.createQueryBuilder().insert().into(ApiKey).values(row).orIgnore().returning('*').execute();
      if (!inserted.raw.length) throw new DomainError(ErrorCode.Conflict, 'An identical API key already exists.');
      const saved = await manager.findOneOrFail(ApiKey, { where: { id: row.id } });
      await this.outbox.append(manager, EventType.ApiKeyCreated, {
        key_id: saved.id,
        name: saved.name,
        scope: saved.scope,
        ...(saved.scopes ? { scopes: saved.scopes } : {}),
        last4: saved.last4,
      });
      return saved;
    });
    return key;
  }
}

/**
 * The gateway handles its own routes, outside the services' per-request origin scope, so key events take
 * theirs from here: the calling key or token (or its team member) over HTTP, the system for the command-line tool,
 * which works with no key.
 */
function keyOrigin(ctx: RequestContext | undefined): ChangeOrigin {
  return ctx?.key_id || ctx?.subject ? originOf(ctx) : systemOrigin('cli');
}

/** A key's own permissions (null for a named scope): exactly one of `scope` and `scopes` is given. */
function permissionsRequested(dto: CreateApiKeyDto): string[] | null {
  if (dto.scope !== undefined && dto.scopes !== undefined) throw DomainError.invalid('scopes', 'Give scope or scopes, not both.');
  if (dto.scopes === undefined) return null;
  dto.scopes.forEach((permission, i) => {
    const problem = permissionProblem(permission);
    if (problem) throw DomainError.invalid(`scopes.${i}`, `scopes.${i}: ${problem}`);
  });
  return [...new Set(dto.scopes)];
}
