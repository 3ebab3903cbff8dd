import type { CompiledQuery, OperationNode, TableNode } from 'kysely';

// What a statement of a write touches, as the batch needs to know it (store/batch.ts): which
// tables it reads or writes, and whether it writes. Taken from what the statement declares, never
// from its SQL text: the store's own statements (store/raw.ts) name their table; a Kysely query
// carries its tree, whose table nodes are walked; raw SQL (sql``) declares nothing and is taken
// as touching every table and writing (the safe side: the write's deferred rows are written
// before it, and it gets a savepoint).
export interface Access {
  // null: any table.
  tables: readonly string[] | null;
  writes: boolean;
}

export const ANY_TABLE_WRITE: Access = { tables: null, writes: true };

const declared = new WeakMap<CompiledQuery, Access>();

// A statement compiled by the store itself, with what it touches.
export function declareAccess(query: CompiledQuery, access: Access): CompiledQuery {
  declared.set(query, access);
  return query;
}

// Kysely compiles the same shapes over and over: their access is computed once per shape (the
// text is only a cache key here).
const byShape = new Map<string, Access>();
const MAX_SHAPES = 1000;

export function accessOf(query: CompiledQuery): Access {
  const own = declared.get(query);
  if (own) return own;
  const node = query.query;
  if (node === undefined || node.kind === 'RawNode') return ANY_TABLE_WRITE;
  let access = byShape.get(query.sql);
  if (access === undefined) {
    const tables = new Set<string>();
    const raw = collectTables(node, tables);
    // A SELECT tree writes nothing, raw fragments or not.
    access = { tables: raw ? null : [...tables], writes: node.kind !== 'SelectQueryNode' };
    if (byShape.size >= MAX_SHAPES) byShape.clear();
    byShape.set(query.sql, access);
  }
  return access;
}

function isNode(value: unknown): value is OperationNode {
  return typeof value === 'object' && value !== null && 'kind' in value && typeof value.kind === 'string';
}

// Adds the tables a query tree names; returns true when a raw fragment in it may name others.
function collectTables(node: unknown, out: Set<string>): boolean {
  if (Array.isArray(node)) {
    let raw = false;
    for (const child of node) raw = collectTables(child, out) || raw;
    return raw;
  }
  if (!isNode(node)) return false;
  switch (node.kind) {
    case 'TableNode':
      out.add((node as TableNode).table.identifier.name);
      return false;
    case 'RawNode':
      return true;
    case 'ValueNode':
    case 'PrimitiveValueListNode':
      return false; // parameters: no tables in them
  }
  let raw = false;
  for (const child of Object.values(node)) {
    if (typeof child === 'object' && child !== null) raw = collectTables(child, out) || raw;
  }
  return raw;
}
