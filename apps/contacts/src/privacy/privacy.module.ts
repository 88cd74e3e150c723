import { Module } from '@nestjs/common';
import { ErasuresService } from './erasures.service';
import { PrivacyController } from './privacy.controller';

@Module({ controllers: [PrivacyController], providers: [ErasuresService] })
export class PrivacyModule {}
