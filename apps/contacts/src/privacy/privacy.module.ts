import { Module } from '@nestjs/common';
import { ErasuresService } from './erasures.service';
import { PrivacyController } from './privacy.controller';
import { SuppressionsModule } from './suppressions.module';

@Module({ imports: [SuppressionsModule], controllers: [PrivacyController], providers: [ErasuresService] })
export class PrivacyModule {}
