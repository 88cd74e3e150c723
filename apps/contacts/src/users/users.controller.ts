import { InputPipe } from '@crm/common';
import { CreateUserDto, ListUsersQuery, UpdateUserDto, UsersRpc } from '@crm/contracts';
import { Controller } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { UsersService } from './users.service';

@Controller()
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @MessagePattern(UsersRpc.Create)
  async create(@Payload('body', new InputPipe(CreateUserDto)) body: CreateUserDto) {
    return { data: await this.users.create(body) };
  }

  @MessagePattern(UsersRpc.List)
  list(@Payload('query', new InputPipe(ListUsersQuery, 'query')) query: ListUsersQuery) {
    return this.users.list(query);
  }

  @MessagePattern(UsersRpc.Get)
  async get(@Payload('params') { id }: { id: string }) {
    return { data: await this.users.get(id) };
  }

  @MessagePattern(UsersRpc.Update)
  async update(@Payload('params') { id }: { id: string }, @Payload('body', new InputPipe(UpdateUserDto)) body: UpdateUserDto) {
    return { data: await this.users.update(id, body) };
  }

  @MessagePattern(UsersRpc.Delete)
  async remove(@Payload('params') { id }: { id: string }) {
    await this.users.remove(id);
  }
}
