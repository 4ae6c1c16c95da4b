/**
 * What the heap of a server under test holds per call: two V8 heap snapshots of the same process (`--heap-snapshot`:
 * one on the empty server, one at the end of the measured window, each after two full GCs) compared the way
 * DevTools' "Comparison" view does, by constructor, in shallow (self) bytes, divided by the number of calls.
 *
 *   npx tsx native-bench/harness/heap-snapshot.ts EMPTY.heapsnapshot LOADED.heapsnapshot --sessions 200 [--top 25]
 *
 * Groups: an object's constructor name ("MediaRelay", "Object", "Timeout"), "(closure)", "(string)", "(array) NAME"
 * for V8's internal arrays (an object's properties or elements), "(code)", "(system) NAME" for V8's hidden objects
 * and "(native) NAME" for objects outside the JS heap that V8 knows of (e.g. an ArrayBuffer's backing store).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapGroup {
  name: string;
  count: number;
  bytes: number;
}

/** Self bytes and object count per group in one snapshot. */
export function summarizeSnapshot(path: string): Map<string, HeapGroup> {
  const snap = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const groups = new Map<string, HeapGroup>();
  const { nodes, strings } = snap;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]!]!;
    const name = strings[nodes[i + nameAt]!]!;
    const key = groupOf(type, name);
    let group = groups.get(key);
    if (group === undefined) groups.set(key, (group = { name: key, count: 0, bytes: 0 }));
    group.count++;
    group.bytes += nodes[i + sizeAt]!;
  }
  return groups;
}

function groupOf(type: string, name: string): string {
  switch (type) {
    case 'object':
      return name;
    case 'closure':
      return '(closure)';
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'array':
      return `(array) ${name}`;
    case 'code':
      return '(code)';
    case 'native':
      return `(native) ${name.replace(/\s*\/.*$/, '')}`;
    case 'hidden':
    case 'object shape':
      return `(system) ${name.replace(/\s*\/.*$/, '')}`;
    default:
      return `(${type})`;
  }
}

export interface HeapComparison {
  sessions: number;
  /** Self bytes per session over all groups (the snapshot's own figure; close to the probe's heap difference). */
  totalBytesPerSession: number;
  /** The groups that grew most, largest first: bytes and objects per session. */
  top: { name: string; bytesPerSession: number; objectsPerSession: number }[];
}

/** The loaded snapshot minus the empty one, per session. */
export function compareSnapshots(emptyPath: string, loadedPath: string, sessions: number, top = 20): HeapComparison {
  const empty = summarizeSnapshot(emptyPath);
  const loaded = summarizeSnapshot(loadedPath);
  const deltas: HeapComparison['top'] = [];
  let total = 0;
  for (const [name, group] of loaded) {
    const before = empty.get(name);
    const bytes = group.bytes - (before?.bytes ?? 0);
    const count = group.count - (before?.count ?? 0);
    total += bytes;
    deltas.push({
      name,
      bytesPerSession: Math.round(bytes / sessions),
      objectsPerSession: Math.round((count / sessions) * 10) / 10,
    });
  }
  for (const [name, group] of empty) if (!loaded.has(name)) total -= group.bytes;
  deltas.sort((a, b) => b.bytesPerSession - a.bytesPerSession);
  return { sessions, totalBytesPerSession: Math.round(total / sessions), top: deltas.slice(0, top) };
}

export function formatComparison(c: HeapComparison): string {
  const lines = [
    `heap per session from snapshots (N=${c.sessions}): ${(c.totalBytesPerSession / 1024).toFixed(1)} KB self size in all; largest growth:`,
  ];
  for (const t of c.top)
    lines.push(
      `  ${(t.bytesPerSession / 1024).toFixed(2).padStart(7)} KB  ${String(t.objectsPerSession).padStart(6)} objects  ${t.name}`,
    );
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    options: { sessions: { type: 'string' }, top: { type: 'string', default: '25' } },
    allowPositionals: true,
  });
  if (positionals.length !== 2 || values.sessions === undefined) {
    console.error('usage: heap-snapshot.ts EMPTY.heapsnapshot LOADED.heapsnapshot --sessions N [--top K]');
    process.exit(2);
  }
  console.log(
    formatComparison(compareSnapshots(positionals[0]!, positionals[1]!, Number(values.sessions), Number(values.top))),
  );
}
