import { Client } from 'pg';

/** SQL pieces the benches that write rows straight into the database share (bench:search, bench:duplicates). */

/** An id of the services' shape (`cont_…`, 26 characters after the prefix) for the integer SQL expression `n`. */
export const idOf = (prefix: string, n: string) => `'${prefix}_' || lpad(to_hex(${n}), 26, '0')`;
// Names made of three of twenty syllables: 8,000 surnames and company stems, so a word matches about one
// row in 8,000 and a word start one in 400, as real names spread, rather than one vocabulary word in ten.
export const SYLLABLES = `(ARRAY['ka','lo','mi','ra','ven','dor','tel','sa','bri','no','gal','fen','ru','mar','ost','lin','pe','zar','ha','qui'])`;
/** A made-up surname or company stem for the non-negative integer SQL expression `h`. */
export const stem = (h: string) => `initcap(${SYLLABLES}[1 + ${h} % 20] || ${SYLLABLES}[1 + (${h} / 20) % 20] || ${SYLLABLES}[1 + (${h} / 400) % 20])`;
export const FIRST = `ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Margaret','Ken','Dennis','Frances','Zoë','José','Chloé','Søren','Amélie','Noah','Liam','Mia','Emma','Oliver']`;

/** Companies 1..count (`comp_…` ids in that order): a made-up stem and a kind of business, a domain under `tld`. */
export function insertCompanies(pg: Client, count: number, tld: string): Promise<unknown> {
  const h = `(hashint4(g)::bigint & 2147483647)`;
  return pg.query(
    `INSERT INTO contacts.companies (id, name, domain, industry)
     SELECT ${idOf('comp', 'g')}, ${stem(h)} || ' ' || (ARRAY['Labs','Systems','Industries','Group','Partners','Works'])[1 + g % 6],
            lower(${stem(h)}) || g || '.' || $2, 'software'
     FROM generate_series(1, $1) g`,
    [count, tld],
  );
}
