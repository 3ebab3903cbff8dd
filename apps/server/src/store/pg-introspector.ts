import { PostgresDialect, sql, type DatabaseIntrospector, type DatabaseMetadata, type DatabaseMetadataOptions, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely';

// What Kysely's Migrator asks the database (does our schema exist, do its bookkeeping tables),
// answered from our own schema only. Kysely's PostgreSQL introspector reads every column of every
// table in every schema and looks each schema up again by name (has_schema_privilege), so in a
// database that others share, a schema dropped while we start failed our migration with
// `schema "..." does not exist` (test/migrate-shared-database.test.ts). Tables come without their
// columns: the Migrator needs names only, and nothing else here introspects.
class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`select nspname as name from pg_catalog.pg_namespace`.execute(this.db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; schema: string; is_view: boolean }>`
      select c.relname as name, n.nspname as schema, c.relkind in ('v', 'm') as is_view
      from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')
      order by c.relname`.execute(this.db);
    return rows
      .filter((r) => options.withInternalKyselyTables || !r.name.startsWith('kysely_migration'))
      .map((r) => ({ name: r.name, schema: r.schema, isView: r.is_view, columns: [] }));
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

export class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
}
