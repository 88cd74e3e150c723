import { ERASURE_LEDGER_MIGRATIONS } from '@crm/runtime';
import { CreateContactCompanies1764700000100 } from './migrations/1764700000100-create-contact-companies';
import { OUTBOX_MIGRATIONS, CHANGE_HISTORY_MIGRATIONS } from '@crm/messaging';
import { Activity } from '../activities/activity.entity';
import { Company } from '../companies/company.entity';
import { Contact } from '../contacts/contact.entity';
import {
  BuiltInCustomFields,
  CreateCustomValueFunctions1765700000000,
  CreateSearchFunctions1765200000000,
  CreateSearchWords1765400000000,
  CustomValueFunctionsByPosition1765900000000,
  IndexSearchWordsTrigrams1765800000000,
  SearchPhoneWithoutTrunkZero1767800000100,
} from '@crm/records';
import { ObjectRecord, ObjectType } from '../objects/object-type.entity';
import { Task } from '../tasks/task.entity';
import { User } from '../users/user.entity';
import { CreateCompanies1763800001000 } from './migrations/1763800001000-create-companies';
import { CreateContacts1763800001100 } from './migrations/1763800001100-create-contacts';
import { CreateActivities1763800001200 } from './migrations/1763800001200-create-activities';
import { CreateTasks1763800001300 } from './migrations/1763800001300-create-tasks';
import { CreateCustomObjects1763800001400 } from './migrations/1763800001400-create-custom-objects';
import { CreateUsers1763900000100 } from './migrations/1763900000100-create-users';
import { CustomFieldsEverywhere1764300000000 } from './migrations/1764300000000-custom-fields-everywhere';
import { CreateImports1764300000200 } from './migrations/1764300000200-create-imports';
import { IndexCustomFieldValues1764500000000 } from './migrations/1764500000000-index-custom-field-values';
import { IndexFoldedCustomFieldValues1765000000000 } from './migrations/1765000000000-index-folded-custom-field-values';
import { IndexSearch1765200000200 } from './migrations/1765200000200-index-search';
import { IndexContactGroupings1765300000300 } from './migrations/1765300000300-index-contact-groupings';
import { UserExternalId1765400000000 } from './migrations/1765400000000-user-external-id';
import { IndexSearchWords1765400000100 } from './migrations/1765400000100-index-search-words';
import { IndexDuplicateKeys1767100000000 } from './migrations/1767100000000-index-duplicate-keys';
import { Import, ImportRow } from '../imports/import.entity';
import { CreateErasures1767300000000 } from './migrations/1767300000000-create-erasures';
import { QualifyDuplicateFunctions1767400000000 } from './migrations/1767400000000-qualify-duplicate-functions';
import { IndexCompanyNameKeys1767800000000 } from './migrations/1767800000000-index-company-name-keys';
import { CreateSuppressions1768100000000 } from './migrations/1768100000000-create-suppressions';
import { AddContactVersions1768500000000 } from './migrations/1768500000000-add-contact-versions';

export const contactsEntities = [Company, Contact, Activity, Task, ObjectType, ObjectRecord, BuiltInCustomFields, User, Import, ImportRow];
export const contactsMigrations = [
  ...OUTBOX_MIGRATIONS,
  ...CHANGE_HISTORY_MIGRATIONS,
  CreateCompanies1763800001000,
  CreateContacts1763800001100,
  CreateActivities1763800001200,
  CreateTasks1763800001300,
  CreateCustomObjects1763800001400,
  CreateUsers1763900000100,
  CustomFieldsEverywhere1764300000000,
  CreateImports1764300000200,
  IndexCustomFieldValues1764500000000,
  CreateContactCompanies1764700000100,
  IndexFoldedCustomFieldValues1765000000000,
  CreateSearchFunctions1765200000000,
  IndexSearch1765200000200,
  IndexContactGroupings1765300000300,
  UserExternalId1765400000000,
  CreateSearchWords1765400000000,
  IndexSearchWords1765400000100,
  CreateCustomValueFunctions1765700000000,
  IndexSearchWordsTrigrams1765800000000,
  CustomValueFunctionsByPosition1765900000000,
  IndexDuplicateKeys1767100000000,
  CreateErasures1767300000000,
  QualifyDuplicateFunctions1767400000000,
  IndexCompanyNameKeys1767800000000,
  SearchPhoneWithoutTrunkZero1767800000100,
  CreateSuppressions1768100000000,
  ...ERASURE_LEDGER_MIGRATIONS,
  AddContactVersions1768500000000,
];
