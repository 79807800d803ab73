import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { flag } from '../../db/schema.js';

export interface ReplyRow {
  id: number;
  incident_id: number;
  body: string;
  public: 0 | 1;
  author_id: number | null;
  author_name: string | null;
  created_at: string;
}

export async function insertReply(db: Kysely<DB>, r: { incidentId: number; body: string; public: boolean; authorId: number | null; now: string }) {
  const row = await db
    .insertInto('replies')
    .values({ incident_id: r.incidentId, body: r.body, public: flag(r.public), author_id: r.authorId, created_at: r.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

function withAuthor(db: Kysely<DB>) {
  return db
    .selectFrom('replies')
    .leftJoin('users', 'users.id', 'replies.author_id')
    .select(['replies.id', 'replies.incident_id', 'replies.body', 'replies.public', 'replies.author_id', sql<string | null>`case when replies.author_deleted = 1 then 'Deleted user' else users.name end`.as('author_name'), 'replies.created_at']);
}

/** Replies oldest first, with the author's name; only public ones when asked. */
export async function listReplies(db: Kysely<DB>, incidentId: number, publicOnly: boolean): Promise<ReplyRow[]> {
  let q = withAuthor(db).where('replies.incident_id', '=', incidentId);
  if (publicOnly) q = q.where('replies.public', '=', 1);
  return q.orderBy('replies.id').execute();
}

export async function findReply(db: Kysely<DB>, id: number): Promise<ReplyRow> {
  return withAuthor(db).where('replies.id', '=', id).executeTakeFirstOrThrow();
}
