import { Type, type Static } from '@sinclair/typebox';
import { Nullable, StringEnum, TimeZone } from '../../lib/schemas.js';
import { OrgParams, Slug } from '../orgs/index.js';

const HHMM = Type.String({ pattern: '^(?:[01][0-9]|2[0-3]):[0-5][0-9]$', description: 'HH:MM, local time in the schedule’s zone' });
const Weekday = StringEnum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
const Instant = Type.String({ format: 'date-time', maxLength: 40, description: 'ISO 8601 with an offset' });
const UserId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });

export const ScheduleParams = Type.Object({ ...OrgParams.properties, schedule: Type.String({ minLength: 1, maxLength: 100, description: 'the schedule’s id or slug' }) });
export const OverrideParams = Type.Object({ ...ScheduleParams.properties, id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }) });

export const RestrictionSchema = Type.Object(
  {
    days: Type.Optional(Type.Array(Weekday, { maxItems: 7, description: 'the days a window starts on; all days when absent' })),
    start_time: HHMM,
    end_time: Type.String({ ...HHMM, description: 'HH:MM; at or before start_time the window runs past midnight and belongs to the day it starts on' }),
  },
  { title: 'Restriction' },
);

const Turn = Type.Object({
  unit: StringEnum(['hour', 'day', 'week'], { description: 'hours are elapsed; days and weeks hand off at the same local clock time' }),
  length: Type.Integer({ minimum: 1, maximum: 8760, description: '1-365 days or weeks, 1-8,760 hours' }),
});

const LayerInput = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,40}$', description: 'keep a layer’s id across edits; new layers get one' })),
    name: Type.Optional(Type.String({ maxLength: 100, pattern: '\\S' })),
    start: Type.String({ maxLength: 40, description: 'the first handoff: a local date-time in the schedule’s zone (`2026-01-05T09:00`) or an ISO 8601 time with an offset' }),
    turn: Turn,
    users: Type.Array(UserId, { minItems: 1, maxItems: 100, description: 'turn k belongs to users[k mod n]; a user may appear more than once' }),
    restrictions: Type.Optional(Type.Array(RestrictionSchema, { maxItems: 50 })),
  },
  { title: 'LayerInput' },
);
export type LayerInput = Static<typeof LayerInput>;

export const Layer = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    start: Type.String(),
    turn: Turn,
    users: Type.Array(Type.Integer()),
    restrictions: Type.Array(RestrictionSchema),
  },
  { title: 'Layer', description: 'A rotation; later layers win where they have someone on call' },
);

const Layers = Type.Array(LayerInput, { maxItems: 20, description: 'in order of precedence: a later layer wins wherever it has someone on call' });
const Name = Type.String({ maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 2000 });

export const CreateScheduleBody = Type.Object({ name: Name, slug: Type.Optional(Slug), time_zone: TimeZone, description: Type.Optional(Nullable(Description)), layers: Layers });
export type CreateScheduleBody = Static<typeof CreateScheduleBody>;
export const UpdateScheduleBody = Type.Object(
  { name: Type.Optional(Name), slug: Type.Optional(Slug), time_zone: Type.Optional(TimeZone), description: Type.Optional(Nullable(Description)), layers: Type.Optional(Layers) },
  { minProperties: 1 },
);
export type UpdateScheduleBody = Static<typeof UpdateScheduleBody>;

export const Span = Type.Object({ start: Type.String(), end: Type.String() }, { title: 'Span' });

export const Schedule = Type.Object(
  {
    id: Type.Integer(),
    slug: Type.String(),
    name: Type.String(),
    description: Nullable(Type.String()),
    time_zone: Type.String(),
    layers: Type.Array(Layer),
    layers_effective_from: Type.String({ description: 'when the layers shown took effect; earlier times are answered with the layers in force then' }),
    gaps: Type.Array(Span, { description: 'time in the next 14 days with nobody on call' }),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'Schedule', description: 'An on-call schedule' },
);
export const ScheduleList = Type.Object({ schedules: Type.Array(Schedule) }, { title: 'ScheduleList' });

export const Source = Type.Union(
  [
    Type.Object({ type: Type.Literal('layer'), layer_id: Type.String() }),
    Type.Object({ type: Type.Literal('override'), override_id: Type.Integer() }),
  ],
  { title: 'ShiftSource' },
);
export const Shift = Type.Object(
  { user_id: Type.Integer(), user_name: Type.String(), start: Type.String(), end: Type.String(), source: Source },
  { title: 'Shift', description: 'A piece of the final schedule: one person, from one layer or override' },
);
export const OnCall = Type.Object({ at: Type.String(), on_call: Type.Array(Shift, { description: 'empty in a gap; start and end bound the current shift (looked for up to 93 days either side)' }) }, { title: 'OnCall' });
export const OnCallQuery = Type.Object({ at: Type.Optional(Instant) });
export const OrgOnCall = Type.Object(
  {
    schedules: Type.Array(
      Type.Object({ id: Type.Integer(), slug: Type.String(), name: Type.String(), time_zone: Type.String(), on_call: Type.Array(Shift), next: Type.Array(Shift, { description: 'the shift after the current one (or after the gap)' }) }),
    ),
  },
  { title: 'OrgOnCall' },
);

export const RangeQuery = Type.Object({
  from: Type.Optional(Instant),
  to: Type.Optional(Instant),
});
export const ShiftList = Type.Object({ shifts: Type.Array(Shift), gaps: Type.Array(Span) }, { title: 'ShiftList' });
export const MyShiftList = Type.Object(
  {
    shifts: Type.Array(
      Type.Object({
        ...Shift.properties,
        schedule: Type.Object({ id: Type.Integer(), slug: Type.String(), name: Type.String(), time_zone: Type.String(), org_id: Type.Integer(), org_slug: Type.String() }),
      }),
    ),
  },
  { title: 'MyShiftList' },
);

export const Timeline = Type.Object(
  {
    from: Type.String(),
    to: Type.String(),
    time_zone: Type.String(),
    layers: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), shifts: Type.Array(Shift) })),
    overrides: Type.Array(Type.Object({ id: Type.Integer(), user_id: Type.Integer(), user_name: Type.String(), start: Type.String(), end: Type.String() })),
    final: Type.Array(Shift),
    gaps: Type.Array(Span),
  },
  { title: 'ScheduleTimeline', description: 'Each layer alone, the overrides and the final schedule over a range' },
);

export const CreateOverrideBody = Type.Object({ user_id: UserId, start: Instant, end: Instant });
export const Override = Type.Object(
  { id: Type.Integer(), user_id: Type.Integer(), start: Type.String(), end: Type.String(), created_at: Type.String() },
  { title: 'Override', description: 'Someone on call in place of every layer for a window' },
);
export const OverrideList = Type.Object({ overrides: Type.Array(Override) }, { title: 'OverrideList' });
export const Deleted = Type.Object({ id: Type.Integer(), deleted: Type.Boolean() });
export const FeedUrl = Type.Object({ url: Type.String() });
export const FeedParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 300 }) });
