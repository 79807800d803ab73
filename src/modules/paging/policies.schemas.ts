import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../../lib/schemas.js';
import { OrgParams } from '../orgs/index.js';

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

/**
 * Whom a level pages. A discriminated object (`type` plus what that type needs) rather than a
 * union of shapes, so a new kind of target (the field-dispatch issue's nearest responders on duty)
 * is one more `type` value and its own fields.
 */
export const Target = Type.Object(
  {
    type: StringEnum(['user', 'schedule', 'team', 'nearest'], {
      description:
        '`user`: that member; `schedule`: whoever is on call in it when the level fires; `team`: its active members; `nearest`: the `count` members with a live beacon nearest to the incident when the level fires',
    }),
    id: Type.Optional({ ...Id, description: 'the member, schedule or team (`user`, `schedule`, `team`; required there, refused for `nearest`)' }),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: 5, description: '`nearest`: how many people (required)' })),
    within_m: Type.Optional(Type.Integer({ minimum: 10, maximum: 50_000, description: '`nearest`: only people within this many metres of the incident' })),
    schedule_id: Type.Optional({ ...Id, description: '`nearest`: only whoever is on call in this schedule of the org (not with `team_id`)' }),
    team_id: Type.Optional({ ...Id, description: '`nearest`: only the active members of this team of the org (not with `schedule_id`)' }),
  },
  { title: 'EscalationTarget', additionalProperties: false },
);
export type Target = Static<typeof Target>;

export const Level = Type.Object(
  {
    delay_minutes: Type.Integer({ minimum: 1, maximum: 1440, description: 'minutes without an acknowledgement before the next level fires' }),
    targets: Type.Array(Target, { minItems: 1, maxItems: 10 }),
  },
  { title: 'EscalationLevel', additionalProperties: false },
);
export type Level = Static<typeof Level>;

const Levels = Type.Array(Level, { minItems: 1, maxItems: 20, description: 'level 1 fires at once; each next one after the previous level’s delay' });
const Repeat = Type.Integer({ minimum: 0, maximum: 9, description: 'how many times the policy starts again from level 1 after its last level (default 0)' });
const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });

export const CreatePolicyBody = Type.Object({ name: Name, repeat: Type.Optional(Repeat), levels: Levels });
export type CreatePolicyBody = Static<typeof CreatePolicyBody>;

export const UpdatePolicyBody = Type.Object({ name: Type.Optional(Name), repeat: Type.Optional(Repeat), levels: Type.Optional(Levels) }, { minProperties: 1 });
export type UpdatePolicyBody = Static<typeof UpdatePolicyBody>;

export const Policy = Type.Object(
  {
    id: Type.Integer(),
    org_id: Type.Integer(),
    name: Type.String(),
    repeat: Type.Integer(),
    levels: Type.Array(Level),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  {
    title: 'EscalationPolicy',
    description: 'Who is paged for an incident, level after level, until someone acknowledges',
    examples: [
      {
        id: 3,
        org_id: 7,
        name: 'Water network',
        repeat: 1,
        levels: [
          { delay_minutes: 5, targets: [{ type: 'schedule', id: 2 }] },
          { delay_minutes: 10, targets: [{ type: 'user', id: 11 }, { type: 'team', id: 4 }] },
          { delay_minutes: 10, targets: [{ type: 'nearest', count: 2, within_m: 5000, team_id: 4 }] },
        ],
        created_at: '2026-03-02T09:15:00.000Z',
        updated_at: '2026-03-02T09:15:00.000Z',
      },
    ],
  },
);
export type Policy = Static<typeof Policy>;

export const PolicyList = Type.Object({ escalation_policies: Type.Array(Policy) }, { title: 'EscalationPolicyList' });
export const PolicyParams = Type.Object({ ...OrgParams.properties, id: Id });
export const DeletedPolicy = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() }, { title: 'DeletedEscalationPolicy' });
