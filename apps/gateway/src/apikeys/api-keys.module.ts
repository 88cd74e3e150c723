import { Module } from '@nestjs/common';
import { MetricsModule } from '../metrics/metrics.module';
import { ApiKeyVerifier } from './api-key.verifier';
import { ApiKeysController } from './api-keys.controller';
import { ApiKeysService } from './api-keys.service';
import { KeyRevocations } from './key-revocations';
import { TeamDirectory } from './team-directory';

/** API keys: kept by the gateway, the one process that authenticates requests. */
@Module({
  imports: [MetricsModule],
  controllers: [ApiKeysController],
  providers: [ApiKeysService, TeamDirectory, ApiKeyVerifier, KeyRevocations],
  exports: [ApiKeysService, ApiKeyVerifier],
})
export class ApiKeysModule {}
