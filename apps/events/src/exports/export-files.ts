import { ExportCompression, ExportLimits } from '@crm/contracts';
import { createHash, Hash } from 'node:crypto';
import { createGzip, Gzip } from 'node:zlib';
import { DataSource } from 'typeorm';

const PIECE = ExportLimits.pieceBytes;

/**
 * Writes one file of an export as it is produced: its bytes (gzip's output, when compressed) are gathered
 * until a piece is full, and each full piece is stored (export_pieces) at once, so memory holds at most
 * one piece, one page of rows and gzip's own window. Piece n holds bytes [n * PIECE, (n + 1) * PIECE) of the
 * file as it is served, which is how a range is found again; the size and SHA-256 are of those bytes.
 */
export class PieceWriter {
  private readonly hash: Hash = createHash('sha256');
  private readonly gzip?: Gzip;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private seq = 0;
  bytes = 0;
  rows = 0;

  constructor(
    private readonly dataSource: DataSource,
    private readonly exportId: string,
    readonly name: string,
    compression: ExportCompression | null,
  ) {
    if (compression === 'gzip') {
      this.gzip = createGzip();
      // gzip hands its output on when it has some, not per write: it is gathered here and stored by the next write or close.
      this.gzip.on('data', (chunk: Buffer) => this.take(chunk));
    }
  }

  /** `text`, which holds `rows` rows. */
  async write(text: string, rows: number): Promise<void> {
    if (!text) return;
    this.rows += rows;
    const chunk = Buffer.from(text, 'utf8');
    if (this.gzip) await new Promise<void>((resolve, reject) => this.gzip!.write(chunk, (err) => (err ? reject(err) : resolve())));
    else this.take(chunk);
    while (this.pendingBytes >= PIECE) {
      const all = Buffer.concat(this.pending);
      await this.store(all.subarray(0, PIECE));
      const rest = all.subarray(PIECE);
      this.pending = rest.length ? [Buffer.from(rest)] : [];
      this.pendingBytes = rest.length;
    }
  }

  /** Stores the rest, gzip's last output included; the file's size, rows and SHA-256. */
  async close(): Promise<{ bytes: number; rows: number; sha256: string }> {
    const gzip = this.gzip;
    if (gzip) await new Promise<void>((resolve, reject) => gzip.once('end', resolve).once('error', reject).end());
    const all = Buffer.concat(this.pending);
    for (let offset = 0; offset < all.length; offset += PIECE) await this.store(all.subarray(offset, offset + PIECE));
    this.pending = [];
    this.pendingBytes = 0;
    return { bytes: this.bytes, rows: this.rows, sha256: this.hash.digest('hex') };
  }

  /** Bytes of the file, in order. */
  private take(chunk: Buffer): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
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
