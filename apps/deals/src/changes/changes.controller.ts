import { ChangeSliceRequest, Ops } from '@crm/contracts';
import { Handles } from '@crm/runtime';
import { ChangeLog } from '@crm/records';
import { Controller } from '@nestjs/common';
import { Payload } from '@nestjs/microservices';

/** This service's slice of GET /changes (docs/changes.md); each record's history is the engine's (recordChangesController). */
@Controller()
export class ChangesController {
  constructor(private readonly log: ChangeLog) {}

  @Handles(Ops.changes.dealsSlice)
  slice(@Payload('body') request: ChangeSliceRequest) {
    return this.log.slice(request);
  }
}
