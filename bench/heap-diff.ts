import { readFileSync } from 'fs';

/**
 * Compares two heap snapshots of one process (V8's .heapsnapshot, e.g. from `bench:soak` with
 * SOAK_SNAPSHOT_AT): what each constructor gained in count and size between them, and, of the objects
 * alive in the second that were not in the first (node ids are stable within a process), the largest
 * groups with the shortest path from the roots to a few of them: what keeps them. A leak shows as a group
 * that keeps growing, held by one path. `node dist/bench/heap-diff.js <earlier> <later> [top]`.
 */
interface Snapshot {
  count: number;
  type: string[];
  name: string[];
  id: Int32Array | number[];
  size: number[];
  /** First edge index of each node, and each edge's type, name or index, and target node. */
  firstEdge: number[];
  edgeType: string[];
  edgeName: Array<string | number>;
  edgeTo: number[];
}

function parse(file: string): Snapshot {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { meta } = raw.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const [nType, nName, nId, nSize, nEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => meta.node_fields.indexOf(f));
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => meta.edge_fields.indexOf(f));
  const count = raw.nodes.length / nf;
  const s: Snapshot = { count, type: [], name: [], id: [], size: [], firstEdge: [], edgeType: [], edgeName: [], edgeTo: [] };
  let edge = 0;
  for (let i = 0; i < count; i++) {
    const base = i * nf;
    s.type.push(meta.node_types[0][raw.nodes[base + nType]]);
    s.name.push(raw.strings[raw.nodes[base + nName]]);
    (s.id as number[]).push(raw.nodes[base + nId]);
    s.size.push(raw.nodes[base + nSize]);
    s.firstEdge.push(edge);
    edge += raw.nodes[base + nEdges];
  }
  s.firstEdge.push(edge);
  for (let e = 0; e < raw.edges.length; e += ef) {
    const type = meta.edge_types[0][raw.edges[e + eType]];
    s.edgeType.push(type);
    const nameOrIndex = raw.edges[e + eName];
    s.edgeName.push(type === 'element' || type === 'hidden' ? nameOrIndex : raw.strings[nameOrIndex]);
    s.edgeTo.push(raw.edges[e + eTo] / nf);
  }
  return s;
}

const key = (s: Snapshot, i: number) => `${s.type[i]} ${s.name[i].slice(0, 80)}`;

function groups(s: Snapshot, include: (i: number) => boolean = () => true): Map<string, { count: number; size: number; sample: number[] }> {
  const out = new Map<string, { count: number; size: number; sample: number[] }>();
  for (let i = 0; i < s.count; i++) {
    if (!include(i)) continue;
    const g = out.get(key(s, i)) ?? { count: 0, size: 0, sample: [] };
    g.count++;
    g.size += s.size[i];
    if (g.sample.length < 3 && Math.random() < 0.2) g.sample.push(i);
    out.set(key(s, i), g);
  }
  return out;
}

/** The shortest path from the root to every node, over strong edges (weak ones do not keep anything). */
function parents(s: Snapshot): { node: Int32Array; edge: Int32Array } {
  const node = new Int32Array(s.count).fill(-1);
  const edge = new Int32Array(s.count).fill(-1);
  node[0] = 0;
  let frontier = [0];
  while (frontier.length) {
    const next: number[] = [];
    for (const from of frontier)
      for (let e = s.firstEdge[from]; e < s.firstEdge[from + 1]; e++) {
        const to = s.edgeTo[e];
        if (s.edgeType[e] === 'weak' || node[to] !== -1) continue;
        node[to] = from;
        edge[to] = e;
        next.push(to);
      }
    frontier = next;
  }
  return { node, edge };
}

function pathOf(s: Snapshot, p: { node: Int32Array; edge: Int32Array }, i: number): string {
  const steps: string[] = [];
  for (let at = i, depth = 0; at > 0 && p.node[at] >= 0 && depth < 14; at = p.node[at], depth++)
    steps.push(`${key(s, at).slice(0, 60)} ←[${String(s.edgeName[p.edge[at]])}]`);
  return steps.reverse().join(' ');
}

function main(): void {
  const [earlierFile, laterFile, topArg] = process.argv.slice(2);
  const top = Number(topArg ?? 15);
  const earlier = parse(earlierFile);
  const later = parse(laterFile);
  const MiB = (b: number) => (b / 2 ** 20).toFixed(2);
  const total = (s: Snapshot) => s.size.reduce((a, b) => a + b, 0);
  const out: string[] = [
    `${earlierFile}: ${earlier.count} objects, ${MiB(total(earlier))} MiB; ${laterFile}: ${later.count} objects, ${MiB(total(later))} MiB`,
    '',
  ];
  const a = groups(earlier);
  const b = groups(later);
  const grown = [...b]
    .map(([k, g]) => ({ k, count: g.count - (a.get(k)?.count ?? 0), size: g.size - (a.get(k)?.size ?? 0) }))
    .sort((x, y) => y.size - x.size)
    .slice(0, top);
  out.push('Grown most, by self size: | type name | count Δ | MiB Δ |', ...grown.map((g) => `| ${g.k} | ${g.count} | ${MiB(g.size)} |`), '');
  const before = new Set(earlier.id as number[]);
  const fresh = groups(later, (i) => !before.has(later.id[i]));
  const p = parents(later);
  const largest = [...fresh].sort((x, y) => y[1].size - x[1].size).slice(0, top);
  out.push(
    'Alive in the later snapshot, not in the earlier: | type name | count | MiB |',
    ...largest.map(([k, g]) => `| ${k} | ${g.count} | ${MiB(g.size)} |`),
    '',
  );
  for (const [k, g] of largest.slice(0, Math.min(6, top))) {
    out.push(`${k}:`);
    for (const i of g.sample) out.push(`  ${pathOf(later, p, i)}`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
}

main();
