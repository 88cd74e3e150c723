import { Controller, Get, Injectable } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { OpenAPIObject } from '@nestjs/swagger';
import { Scopes } from '../http/scopes';
import { BuiltOnFirstUse } from './built-on-first-use';

/** The document of this gateway's own routes (see createOpenApiDocument). */
@Injectable()
export class OpenApiDocument extends BuiltOnFirstUse<OpenAPIObject> {
  constructor() {
    super('OpenAPI');
  }
}

/** `GET /openapi.json`, open without a key like the reference UI at `/docs`. */
@ApiExcludeController()
@Controller('openapi.json')
export class OpenApiController {
  constructor(private readonly document: OpenApiDocument) {}

  @Get()
  @Scopes('public')
  get(): Promise<OpenAPIObject> {
    return this.document.get();
  }
}
