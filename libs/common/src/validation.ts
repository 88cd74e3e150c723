import { PipeTransform } from '@nestjs/common';
import { ClassConstructor, plainToInstance } from 'class-transformer';
import { ValidationError, validateSync } from 'class-validator';
import { DomainError, ErrorCode, FieldIssue } from '@crm/contracts';

function issueCode(constraint: string): string {
  switch (constraint) {
    case 'whitelistValidation':
      return 'unknown_field';
    case 'isDefined':
    case 'isNotEmpty':
      return 'required';
    case 'reservedName':
      return 'reserved';
    default:
      return 'invalid_value';
  }
}

function flatten(errors: ValidationError[], parent = ''): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    // One issue per field: a missing or unknown field says only that; otherwise the first rule broken.
    const chosen = constraints.find(([name]) => name === 'whitelistValidation') ?? constraints.find(([name]) => name === 'isDefined') ?? constraints[0];
    if (chosen) {
      const [constraint, text] = chosen;
      const message = constraint === 'whitelistValidation' ? `unknown field '${field}'` : text.replace(error.property, field);
      issues.push({ field, code: issueCode(constraint), message });
    }
    if (error.children?.length) issues.push(...flatten(error.children, field));
  }
  return issues;
}

export function validationFailed(issues: FieldIssue[]): DomainError {
  const message = issues.length === 1 ? issues[0].message : `${issues.length} fields are invalid: ${issues.map((i) => i.field).join(', ')}`;
  return new DomainError(ErrorCode.ValidationFailed, message, issues);
}

/**
 * Turns untrusted JSON (a body or a query) into an instance of `type`, rejecting unknown fields and
 * wrong types with one `validation_failed` error that names every bad field.
 */
export function validateInput<T extends object>(type: ClassConstructor<T>, input: unknown, what = 'request body'): T {
  if (input === undefined || input === null) input = {};
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new DomainError(ErrorCode.InvalidRequest, `${what} must be a JSON object`);
  }
  const instance = plainToInstance(type, input, { exposeDefaultValues: true });
  const errors = validateSync(instance, {
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    validationError: { target: false, value: false },
  });
  if (errors.length) throw validationFailed(flatten(errors));
  return instance;
}

/** `validateInput` as a Nest pipe: `@Payload('body', new InputPipe(CreateContactDto)) body: CreateContactDto`. */
export class InputPipe<T extends object> implements PipeTransform<unknown, T> {
  constructor(
    private readonly type: ClassConstructor<T>,
    private readonly what = 'request body',
  ) {}

  transform(value: unknown): T {
    return validateInput(this.type, value, this.what);
  }
}
