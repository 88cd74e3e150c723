import { ExportLimits } from '@crm/contracts';
import { createHash, Hash } from 'node:crypto';
import { DataSource } from 'typeorm';

const PIECE = ExportLimits.pieceBytes;

/**
 * Writes one file of an export as it is produced: lines are gathered until a piece is full, and each full
 * piece is stored (export_pieces) at once, so memory holds at most one piece and one page of rows. Piece n
 * holds bytes [n * PIECE, (n + 1) * PIECE), which is how a range is found again.
 */
export class PieceWriter {
  private readonly hash: Hash = createHash('sha256');
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  bytes = 0;
  rows = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly exportId: string,
    readonly name: string,
  ) {}

  async write(lines: string[]): Promise<void> {
    if (!lines.length) return;
    const chunk = Buffer.from(lines.join('\n') + '\n', 'utf8');
    this.hash.update(chunk);
    this.rows += lines.length;
    this.bytes += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= PIECE) {
      const all = Buffer.concat(this.pending);
      await this.store(all.subarray(0, PIECE));
      const rest = all.subarray(PIECE);
      this.pending = rest.length ? [Buffer.from(rest)] : [];
      this.pendingBytes = rest.length;
    }
  }

  /** Stores the last piece; the file's size, rows and SHA-256. */
  async close(): Promise<{ bytes: number; rows: number; sha256: string }> {
    if (this.pendingBytes) await this.store(Buffer.concat(this.pending));
    this.pending = [];
    this.pendingBytes = 0;
    return { bytes: this.bytes, rows: this.rows, sha256: this.hash.digest('hex') };
  }

  private async store(data: Buffer): Promise<void> {
    await this.dataSource.query(`INSERT INTO export_pieces (export_id, file, seq, data) VALUES ($1, $2, $3, $4)`, [this.exportId, this.name, this.seq++, data]);
  }
}

/** Bytes [offset, offset + length) of a stored file (the caller keeps them within it and within one piece's size). */
export async function readRange(dataSource: DataSource, exportId: string, name: string, offset: number, length: number): Promise<Buffer> {
  if (length <= 0) return Buffer.alloc(0);
  const first = Math.floor(offset / PIECE);
  const last = Math.floor((offset + length - 1) / PIECE);
  const rows: Array<{ seq: number; data: Buffer }> = await dataSource.query(
    `SELECT seq, data FROM export_pieces WHERE export_id = $1 AND file = $2 AND seq BETWEEN $3 AND $4 ORDER BY seq`,
    [exportId, name, first, last],
  );
  const joined = Buffer.concat(rows.map((r) => r.data));
  const start = offset - first * PIECE;
  return joined.subarray(start, start + length);
}
