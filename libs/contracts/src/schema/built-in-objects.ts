import { CreateActivityDto, UpdateActivityDto } from '../contacts/activity.dto';
import { CreateCompanyDto, UpdateCompanyDto } from '../contacts/company.dto';
import { CreateContactDto, UpdateContactDto } from '../contacts/contact.dto';
import { CreateTaskDto, UpdateTaskDto } from '../contacts/task.dto';
import { CreateDealDto, UpdateDealDto } from '../deals/deal.dto';
import { CreatePipelineDto, StageInputDto, UpdatePipelineDto } from '../deals/pipeline.dto';

/** A built-in object and the request classes that validate its writes: GET /schema is generated from them. */
export interface BuiltInObject {
  slug: string;
  name: string;
  create: Function;
  update?: Function;
}

export const BUILT_IN_OBJECTS: readonly BuiltInObject[] = [
  { slug: 'contacts', name: 'Contact', create: CreateContactDto, update: UpdateContactDto },
  { slug: 'companies', name: 'Company', create: CreateCompanyDto, update: UpdateCompanyDto },
  { slug: 'deals', name: 'Deal', create: CreateDealDto, update: UpdateDealDto },
  { slug: 'pipelines', name: 'Pipeline', create: CreatePipelineDto, update: UpdatePipelineDto },
  { slug: 'stages', name: 'Stage', create: StageInputDto },
  { slug: 'activities', name: 'Activity', create: CreateActivityDto, update: UpdateActivityDto },
  { slug: 'tasks', name: 'Task', create: CreateTaskDto, update: UpdateTaskDto },
];

/** Slugs no custom object may take: the built-in objects and the other top-level paths of the API. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  ...BUILT_IN_OBJECTS.map((o) => o.slug),
  'users',
  'events',
  'webhooks',
  'apikeys',
  'schema',
  'capture',
  'objects',
  'records',
  'fields',
  'health',
  'metrics',
]);

/** Reference targets outside the custom objects whose records a reference value may name. */
export const REFERENCEABLE_BUILT_INS = ['contacts', 'companies', 'deals', 'activities', 'tasks'] as const;
