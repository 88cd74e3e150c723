import { Module } from '@nestjs/common';
import { BearerTokens } from './bearer-tokens';
import { ProtectedResourceController } from './protected-resource.controller';
import { SubjectUsers } from './subject-users';

/** Bearer tokens from the deployment's identity provider (docs/api.md, "Bearer tokens"); API keys are ApiKeysModule's. */
@Module({ controllers: [ProtectedResourceController], providers: [BearerTokens, SubjectUsers], exports: [BearerTokens, SubjectUsers] })
export class AuthModule {}
