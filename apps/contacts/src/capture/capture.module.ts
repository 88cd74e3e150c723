import { Module } from '@nestjs/common';
import { SuppressionsModule } from '../privacy/suppressions.module';
import { CaptureController } from './capture.controller';
import { CaptureService } from './capture.service';

@Module({ imports: [SuppressionsModule], controllers: [CaptureController], providers: [CaptureService] })
export class CaptureModule {}
