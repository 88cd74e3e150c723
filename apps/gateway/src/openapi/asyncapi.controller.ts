import { Controller, Get, Injectable } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Scopes } from '../http/scopes';

/** The document built at start-up from the event catalogue (see createAsyncApiDocument). */
@Injectable()
export class AsyncApiDocument {
  private document?: Record<string, unknown>;

  set(document: Record<string, unknown>): void {
    this.document = document;
  }

  get(): Record<string, unknown> {
    if (!this.document) throw new Error('The AsyncAPI document is built when the gateway starts');
    return this.document;
  }
}

/**
 * `GET /asyncapi.json`, open without a key like `/openapi.json`: the events on NATS, for services inside
 * the deployment. Left out of the OpenAPI document, as `/openapi.json` is: a description, not an operation.
 */
@ApiExcludeController()
@Controller('asyncapi.json')
export class AsyncApiController {
  constructor(private readonly document: AsyncApiDocument) {}

  @Get()
  @Scopes('public')
  get(): Record<string, unknown> {
    return this.document.get();
  }
}
