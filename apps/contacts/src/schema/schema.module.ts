import { Module } from '@nestjs/common';
import { SchemaHandler } from './schema.handler';

@Module({ providers: [SchemaHandler] })
export class SchemaModule {}
