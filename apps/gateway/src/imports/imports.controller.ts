import { Ops } from '@crm/contracts';
import { Controller, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes } from '@nestjs/swagger';
import { GatewayRequest } from '../http/request-context';
import { Route } from '../routes/route.decorator';
import { ImportUploads } from './import-uploads.service';

/** POST /imports takes the upload as a stream, not as a JSON body the gateway could forward whole. */
@Controller()
export class ImportsController {
  constructor(private readonly uploads: ImportUploads) {}

  @Route(Ops.imports.create)
  @ApiConsumes('text/csv', 'application/x-ndjson')
  @ApiBody({
    required: true,
    schema: {
      type: 'string',
      description: 'CSV: a header line of field names, then one record per line. NDJSON: one JSON object per line, shaped like the create body.',
    },
  })
  create(@Req() req: GatewayRequest) {
    return this.uploads.receive(req);
  }
}
