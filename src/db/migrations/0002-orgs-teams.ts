import { sql, type Kysely } from 'kysely';
import type { MigrationDialect } from '../migrate.js';

// The billing owner of each org (whose plan sets its limits), teams, team members and invites.
export async function up(db: Kysely<unknown>, d: MigrationDialect): Promise<void> {
  await db.schema.alterTable('orgs').addColumn('owner_id', d.idType, (c) => c.references('users.id').onDelete('set null')).execute();
  await sql`update orgs set owner_id = (
      select m.user_id from memberships m where m.org_id = orgs.id and m.role = 'owner'
      order by m.created_at, m.user_id limit 1)`.execute(db);
  await db.schema.createIndex('orgs_owner_idx').on('orgs').columns(['owner_id', 'personal', 'created_at']).execute();

  await db.schema
    .createTable('teams')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('slug', 'text', (c) => c.notNull())
    .addColumn('routing', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('teams_org_slug_unique', ['org_id', 'slug'])
    .execute();

  await db.schema
    .createTable('team_members')
    // The id orders members by when they joined: the oldest N stay usable over a plan limit.
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('team_id', d.idType, (c) => c.notNull().references('teams.id').onDelete('cascade'))
    .addColumn('user_id', d.idType, (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('team_members_team_user_unique', ['team_id', 'user_id'])
    .execute();
  await db.schema.createIndex('team_members_user_idx').on('team_members').column('user_id').execute();

  await db.schema
    .createTable('org_invites')
    .addColumn('id', d.idType, (c) => d.identity(c))
    .addColumn('org_id', d.idType, (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('invited_by', d.idType, (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'text')
    .addUniqueConstraint('org_invites_org_email_unique', ['org_id', 'email'])
    .execute();
  await db.schema.createIndex('org_invites_email_idx').on('org_invites').column('email').execute();
}
