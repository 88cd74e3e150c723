import { ImportFormat, ImportLimits, ImportRowInput } from '@crm/contracts';
import { createInterface } from 'readline';
import { pipeline, Readable, Transform, TransformCallback } from 'stream';
import { inputProblems } from '../http/input-limits';

/** The upload as a whole cannot be used: too large, or not readable as its format. */
export class UploadError extends Error {
  constructor(
    message: string,
    readonly tooLarge = false,
  ) {
    super(message);
  }
}

/** Passes bytes through until `limit`, then fails the stream. */
class ByteLimit extends Transform {
  private seen = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) return done(new UploadError(`The upload exceeds the ${this.limit} byte limit.`, true));
    done(null, chunk);
  }
}

/** A parsed row, or the reason it cannot be imported: the row fails, the rest go on. */
function checkedRow(line: number, values: Record<string, unknown>): ImportRowInput {
  const issues = inputProblems(values);
  if (issues.length) return { line, error: { code: 'validation_failed', message: issues.map((i) => i.message).join('; ') } };
  return { line, values };
}

async function* csvRows(input: Readable): AsyncGenerator<ImportRowInput> {
  // Memory: the CSV parser loads with the first CSV upload, not at start-up.
  const { parse } = await import('csv-parse');
  const parser = parse({ bom: true, skip_empty_lines: true, relax_column_count: true, max_record_size: ImportLimits.rowBytes, info: true });
  // pipeline, unlike pipe, hands a failure of the input (the size limit, a dropped connection) to the parser.
  pipeline(input, parser, () => undefined);
  let header: string[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
    const line = info.lines;
    if (!header) {
      header = record.map((name) => name.trim());
      const duplicate = header.find((name, i) => header!.indexOf(name) !== i);
      if (header.some((name) => !name)) throw new UploadError('The CSV header has an empty column name.');
      if (duplicate) throw new UploadError(`The CSV header names the column '${duplicate}' twice.`);
      continue;
    }
    if (record.length !== header.length) {
      yield { line, error: { code: 'invalid_request', message: `line ${line} has ${record.length} fields; the header has ${header.length}` } };
      continue;
    }
    yield checkedRow(line, Object.fromEntries(header.map((name, i) => [name, record[i]])));
  }
}

async function* ndjsonRows(input: Readable): AsyncGenerator<ImportRowInput> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (!text.trim()) continue;
    if (Buffer.byteLength(text) > ImportLimits.rowBytes) {
      yield { line, error: { code: 'invalid_request', message: `line ${line} is longer than ${ImportLimits.rowBytes} bytes` } };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      yield { line, error: { code: 'invalid_request', message: `line ${line} is not valid JSON: ${(err as Error).message}` } };
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      yield { line, error: { code: 'invalid_request', message: `line ${line} must be a JSON object` } };
      continue;
    }
    yield checkedRow(line, value as Record<string, unknown>);
  }
}

/**
 * Reads an upload as it arrives, row by row, in chunks that each fit one message to the contacts service
 * (`ImportLimits.chunkRows` rows, about `chunkBytes` of JSON). A CSV's first line names the columns.
 */
export async function* uploadChunks(body: Readable, format: ImportFormat, limitBytes: number = ImportLimits.bytes): AsyncGenerator<ImportRowInput[]> {
  const limited = new ByteLimit(limitBytes);
  let failure: Error | undefined;
  pipeline(body, limited, (err) => (failure ??= err ?? undefined));
  limited.on('error', (err) => (failure ??= err));
  const rows = format === 'csv' ? csvRows(limited) : ndjsonRows(limited);
  let chunk: ImportRowInput[] = [];
  let bytes = 0;
  try {
    for await (const row of rows) {
      const size = JSON.stringify(row).length;
      if (chunk.length && (chunk.length >= ImportLimits.chunkRows || bytes + size > ImportLimits.chunkBytes)) {
        yield chunk;
        chunk = [];
        bytes = 0;
      }
      chunk.push(row);
      bytes += size;
    }
  } catch (err) {
    if (err instanceof UploadError) throw err;
    // csv-parse reports a broken file (an unclosed quote, a record over the size limit) with its line.
    throw new UploadError(`The upload could not be read as ${format.toUpperCase()}: ${(err as Error).message}`);
  }
  // A line reader ends quietly when its input fails, so the failure is checked here.
  if (failure) throw failure instanceof UploadError ? failure : new UploadError(`The upload was cut off: ${failure.message}`);
  if (chunk.length) yield chunk;
}
