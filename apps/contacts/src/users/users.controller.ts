import { CreateUserDto, ListUsersQuery, Ops, UpdateUserDto, UserForSubjectDto, UserForSubjectReply } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';
import { UsersService } from './users.service';

@Controller()
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Handles(Ops.users.create)
  async create(@Payload('body') body: CreateUserDto) {
    return { data: await this.users.create(body) };
  }

  @Handles(Ops.users.list)
  list(@Payload('query') query: ListUsersQuery) {
    return this.users.list(query);
  }

  @Handles(Ops.users.get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.users.get(id) };
  }

  @Handles(Ops.users.update)
  async update(@Payload('params') { id }: { id: string }, @Payload('body') body: UpdateUserDto) {
    return { data: await this.users.update(id, body) };
  }

  @Handles(Ops.contactsInternal.userForSubject)
  async forSubject(@Payload('body') body: UserForSubjectDto): Promise<UserForSubjectReply> {
    return { user_id: await this.users.forSubject(body.external_id) };
  }

  @Handles(Ops.users.remove)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.users.remove(id);
  }
}
