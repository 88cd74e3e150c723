import { Controller, Get, Injectable } from '@nestjs/common';
import { ApiExcludeController, OpenAPIObject } from '@nestjs/swagger';
import { Scopes } from '../http/scopes';

/** The document built at start-up from this gateway's own routes (see createOpenApiDocument). */
@Injectable()
export class OpenApiDocument {
  private document?: OpenAPIObject;

  set(document: OpenAPIObject): void {
    this.document = document;
  }

  get(): OpenAPIObject {
    if (!this.document) throw new Error('The OpenAPI document is built when the gateway starts');
    return this.document;
  }
}

/** `GET /openapi.json`, open without a key like the reference UI at `/docs`. */
@ApiExcludeController()
@Controller('openapi.json')
export class OpenApiController {
  constructor(private readonly document: OpenApiDocument) {}

  @Get()
  @Scopes('public')
  get(): OpenAPIObject {
    return this.document.get();
  }
}
