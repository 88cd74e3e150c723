import { Module } from '@nestjs/common';
import { ImportsController } from './imports.controller';
import { ImportUploads } from './import-uploads.service';

/** POST /imports, streamed into the contacts service's import job; listing and reading imports are forwarded routes. */
@Module({ controllers: [ImportsController], providers: [ImportUploads] })
export class ImportsModule {}
