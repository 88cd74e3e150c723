import { Module } from '@nestjs/common';
import { CaptureHandler } from './capture.handler';
import { CaptureService } from './capture.service';

@Module({ providers: [CaptureService, CaptureHandler] })
export class CaptureModule {}
