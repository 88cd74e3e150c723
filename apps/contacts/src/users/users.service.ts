import {
  CursorCodec,
  diffFields,
  DomainError,
  fieldSpecs,
  findById,
  IdPrefix,
  insertReturning,
  isId,
  isUniqueViolation,
  keysetPage,
  newId,
  Page,
  updateReturning,
} from '@crm/common';
import { CreateUserDto, ListUsersQuery, UpdateUserDto, UserView } from '@crm/contracts';
import { createdChange, deletedChange, OutboxService, updatedChange } from '@crm/messaging';
import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { NOW_MS } from '@crm/records';
import { User } from './user.entity';
import { presentUser } from './user.presenter';

const LIST = 'users';
const EMAIL_INDEX = 'users_email_key';
const EXTERNAL_ID_INDEX = 'users_external_id_key';

const USER_FIELDS = fieldSpecs<User>({ name: 'value', email: 'value', role: 'value', external_id: 'value' });

@Injectable()
export class UsersService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly cursors: CursorCodec,
    private readonly outbox: OutboxService,
  ) {}

  async create(dto: CreateUserDto): Promise<UserView> {
    const id = newId(IdPrefix.User);
    try {
      return presentUser(
        await this.dataSource.transaction(async (m) => {
          const user = await insertReturning(m, User, {
            id,
            name: dto.name,
            email: dto.email,
            role: dto.role ?? 'member',
            externalId: dto.external_id ?? null,
          });
          // Team members emit no events; their history is all they record.
          await this.outbox.record(m, { changes: [createdChange('users', id, presentUser(user))] });
          return user;
        }),
      );
    } catch (err) {
      throw await this.translateWriteError(err, dto);
    }
  }

  async list(query: ListUsersQuery): Promise<Page<UserView>> {
    const { qb, read } = keysetPage(this.cursors, this.dataSource.getRepository(User), 'u', LIST, query);
    if (query.email) qb.andWhere('lower(u.email) = :email', { email: query.email });
    if (query.external_id) qb.andWhere('u.external_id = :externalId', { externalId: query.external_id });
    return read(presentUser);
  }

  async get(id: string): Promise<UserView> {
    return presentUser(await this.find(this.dataSource.manager, id));
  }

  async update(id: string, dto: UpdateUserDto): Promise<UserView> {
    try {
      return presentUser(
        await this.dataSource.transaction(async (m) => {
          const user = await this.find(m, id, true);
          const { set, changes } = diffFields(user, { ...dto }, USER_FIELDS);
          if (!changes.changed.length) return user;
          const updated = await updateReturning(m, User, id, { ...set, updatedAt: () => NOW_MS } as QueryDeepPartialEntity<User>);
          await this.outbox.record(m, { changes: [updatedChange('users', id, changes)] });
          return updated;
        }),
      );
    } catch (err) {
      throw await this.translateWriteError(err, dto);
    }
  }

  /** The member whose external_id is a bearer token's subject (the gateway's actor for the token), or null. */
  async forSubject(externalId: string): Promise<string | null> {
    const [row] = await this.dataSource.query(`SELECT id FROM users WHERE external_id = $1`, [externalId]);
    return row?.id ?? null;
  }

  /** Records the user owned keep the id in owner_id; their relationships.owner then has an empty name. */
  async remove(id: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const user = await this.find(m, id, true);
      await m.delete(User, { id });
      await this.outbox.record(m, { changes: [deletedChange('users', id, presentUser(user))] });
    });
  }

  private async find(m: EntityManager, id: string, lock = false): Promise<User> {
    if (!isId(id, IdPrefix.User)) throw DomainError.notFound('user', id);
    const user = await findById(m, User, id, lock);
    if (!user) throw DomainError.notFound('user', id);
    return user;
  }

  private async translateWriteError(err: unknown, { email, external_id: externalId }: { email?: string; external_id?: string | null }): Promise<unknown> {
    if (isUniqueViolation(err, EXTERNAL_ID_INDEX) && externalId) {
      const [existing] = await this.dataSource.query(`SELECT id FROM users WHERE external_id = $1`, [externalId]);
      const holder = existing ? ` (${existing.id})` : '';
      return DomainError.conflict(`A user with external_id '${externalId}' already exists${holder}.`, [
        { field: 'external_id', code: 'duplicate', message: `external_id '${externalId}' is already used by another user${holder}` },
      ]);
    }
    if (isUniqueViolation(err, EMAIL_INDEX) && email) {
      const [existing] = await this.dataSource.query(`SELECT id FROM users WHERE lower(email) = lower($1)`, [email]);
      const holder = existing ? ` (${existing.id})` : '';
      return DomainError.conflict(`A user with email '${email}' already exists${holder}.`, [
        { field: 'email', code: 'duplicate', message: `email '${email}' is already used by another user${holder}` },
      ]);
    }
    return err;
  }
}
