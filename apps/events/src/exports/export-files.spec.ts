import { ExportLimits } from '@crm/contracts';
import { createHash, randomBytes } from 'crypto';
import { DataSource } from 'typeorm';
import { gunzipSync } from 'zlib';
import { PieceWriter } from './export-files';

/** The pieces a writer stores, in the order it stores them (what export_pieces would hold). */
function storedPieces(): { dataSource: DataSource; pieces: Array<{ seq: number; data: Buffer }> } {
  const pieces: Array<{ seq: number; data: Buffer }> = [];
  const dataSource = { query: async (_sql: string, [, , seq, data]: [string, string, number, Buffer]) => void pieces.push({ seq, data: Buffer.from(data) }) };
  return { dataSource: dataSource as unknown as DataSource, pieces };
}

describe('PieceWriter', () => {
  it.each([null, 'gzip'] as const)(
    'cuts the file as served (compression %s) into whole pieces, its size and SHA-256 those of the bytes stored',
    async (compression) => {
      const { dataSource, pieces } = storedPieces();
      const writer = new PieceWriter(dataSource, 'exp_x', 'contacts.csv', compression);
      const pages = Array.from({ length: 12 }, () => randomBytes(90_000).toString('base64') + '\n');
      for (const page of pages) await writer.write(page, 1);
      const closed = await writer.close();

      const file = Buffer.concat(pieces.map((p) => p.data));
      expect(pieces.map((p) => p.seq)).toEqual(pieces.map((_, i) => i));
      expect(pieces.slice(0, -1).every((p) => p.data.length === ExportLimits.pieceBytes)).toBe(true);
      expect(pieces.length).toBeGreaterThan(2);
      expect(closed).toEqual({ bytes: file.length, rows: 12, sha256: createHash('sha256').update(file).digest('hex') });
      const text = compression ? gunzipSync(file) : file;
      expect(text.toString('utf8')).toBe(pages.join(''));
    },
  );
});
