import { ExportFormat } from '@crm/contracts';
import { stringify } from 'csv-stringify/sync';

/** Turns pages of an object's rows into a file's text, page by page. */
export interface RowEncoder {
  encode(rows: Record<string, unknown>[]): string;
}

/** One JSON object a line. */
class NdjsonRows implements RowEncoder {
  encode(rows: Record<string, unknown>[]): string {
    return rows.length ? rows.map((row) => JSON.stringify(row)).join('\n') + '\n' : '';
  }
}

/**
 * RFC 4180 CSV (docs/exports.md, "CSV"): a header of the first row's keys, the rows in that order; null is
 * an empty cell and an empty string a quoted one (`""`), as PostgreSQL's COPY writes them; objects and
 * lists (metadata, custom fields) are their JSON; values are written as they are, never altered for
 * spreadsheets. Every row of an object has the same keys; a row with another is an error, never a
 * dropped cell.
 */
class CsvRows implements RowEncoder {
  private columns?: string[];

  encode(rows: Record<string, unknown>[]): string {
    if (!rows.length) return '';
    const header = !this.columns;
    this.columns ??= Object.keys(rows[0]);
    const known = new Set(this.columns);
    for (const row of rows) {
      const extra = Object.keys(row).find((key) => !known.has(key));
      if (extra !== undefined) throw new Error(`export row ${String(row.id)} has a field '${extra}' the file's header does not`);
    }
    return stringify(rows, {
      header,
      columns: this.columns,
      record_delimiter: 'unix',
      cast: {
        boolean: (value) => String(value),
        object: (value) => JSON.stringify(value),
        string: (value) => (value === '' ? { value, quoted_empty: true } : value),
      },
    });
  }
}

export function rowEncoder(format: ExportFormat): RowEncoder {
  return format === 'csv' ? new CsvRows() : new NdjsonRows();
}
