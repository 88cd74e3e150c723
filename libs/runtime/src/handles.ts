import { validateInput } from '@crm/common';
import { AnyOperation, ReplyOf, RequestContext } from '@crm/contracts';
import { applyDecorators, ArgumentMetadata, PipeTransform, UseInterceptors, UsePipes } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { SoftWarningsInterceptor } from './soft-warnings';
import { OperationVia } from './change-origin.step';

/**
 * Validates the parts of a request its operation declares classes for (`@Payload('body')` with the body
 * class, `@Payload('query')` with the query class); the others pass as they are.
 */
export class OperationInputPipe implements PipeTransform {
  constructor(private readonly op: AnyOperation) {}

  transform(value: unknown, { data }: ArgumentMetadata): unknown {
    if (data === 'body' && this.op.body) return validateInput(this.op.body as new () => object, value);
    if (data === 'query' && this.op.query) return validateInput(this.op.query as new () => object, value, 'query');
    return value;
  }
}

type Handler<R> = (...args: never[]) => R | Promise<R>;

/**
 * Makes a controller method the handler of an operation: it answers the operation's request name, gets
 * its input validated with the operation's classes, and must return the operation's reply. A write whose
 * reply may carry soft-enforcement warnings collects them (SoftWarningsInterceptor).
 */
export function Handles<O extends AnyOperation>(op: O) {
  const decorators = [MessagePattern(op.name), UsePipes(new OperationInputPipe(op))];
  if (op.reply.kind === 'resource' && op.reply.warnings) decorators.push(UseInterceptors(SoftWarningsInterceptor));
  if (op.via) decorators.push(OperationVia(op.via));
  const decorate = applyDecorators(...decorators);
  return <H extends Handler<ReplyOf<O>>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<H>): void => {
    decorate(target, key, descriptor);
  };
}

/**
 * Makes one method the handler of many operations that differ only in the object they name (an object's
 * query or aggregation, say): for each `[slug, operation]` it adds a handler that reads the request's
 * `ctx` and `body` and calls `handle` with the slug. The handlers follow the registry, not a list kept here.
 */
export function handleEach<T extends object, S extends string>(
  controller: abstract new (...args: never[]) => T,
  operations: ReadonlyArray<readonly [S, AnyOperation]>,
  handle: (self: T, ctx: RequestContext, slug: S, body: never) => unknown,
): void {
  const proto = controller.prototype as Record<string, unknown>;
  for (const [slug, op] of operations) {
    const key = `${op.name}`;
    Object.defineProperty(proto, key, {
      value: function (this: T, ctx: RequestContext, body: never) {
        return handle(this, ctx, slug, body);
      },
      writable: true,
      configurable: true,
    });
    Payload('ctx')(proto, key, 0);
    Payload('body')(proto, key, 1);
    Handles(op)(proto, key, Object.getOwnPropertyDescriptor(proto, key)!);
  }
}
