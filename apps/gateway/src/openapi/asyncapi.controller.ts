import { Controller, Get, Injectable } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Scopes } from '../http/scopes';
import { BuiltOnFirstUse } from './built-on-first-use';

/** The document of the event catalogue (see createAsyncApiDocument). */
@Injectable()
export class AsyncApiDocument extends BuiltOnFirstUse<Record<string, unknown>> {
  constructor() {
    super('AsyncAPI');
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
  get(): Promise<Record<string, unknown>> {
    return this.document.get();
  }
}
