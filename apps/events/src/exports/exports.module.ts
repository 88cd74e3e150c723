import { Module } from '@nestjs/common';
import { ExportPages } from './export-pages';
import { ExportRunner } from './export-runner';
import { ExportsController } from './exports.controller';
import { ExportsService } from './exports.service';

/** Exports (docs/exports.md): started and read over RPC, run in the background by any replica. */
@Module({ controllers: [ExportsController], providers: [ExportsService, ExportPages, ExportRunner] })
export class ExportsModule {}
