import { Module } from '@nestjs/common';
import { Suppressions } from './suppressions';

/** The suppressed emails, for every write that stores an email (docs/privacy.md, "Suppression"). */
@Module({ providers: [Suppressions], exports: [Suppressions] })
export class SuppressionsModule {}
