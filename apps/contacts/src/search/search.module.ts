import { Module } from '@nestjs/common';
import { DuplicatesService } from './duplicates.service';
import { SearchController } from './search.controller';
import { SearchService } from './search.service';

@Module({ controllers: [SearchController], providers: [SearchService, DuplicatesService] })
export class SearchModule {}
