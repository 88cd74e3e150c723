import { Module } from '@nestjs/common';
import { ObjectsModule } from '../objects/objects.module';
import { SchemaController } from './schema.controller';

@Module({ imports: [ObjectsModule], controllers: [SchemaController] })
export class SchemaModule {}
