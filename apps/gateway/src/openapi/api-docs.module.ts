import { Module } from '@nestjs/common';
import { AsyncApiController, AsyncApiDocument } from './asyncapi.controller';
import { OpenApiController, OpenApiDocument } from './openapi.controller';

/** The API's descriptions, built on first request and served without a key. */
@Module({ controllers: [OpenApiController, AsyncApiController], providers: [OpenApiDocument, AsyncApiDocument], exports: [OpenApiDocument, AsyncApiDocument] })
export class ApiDocsModule {}
