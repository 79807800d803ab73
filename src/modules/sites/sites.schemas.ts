import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from '../../lib/schemas.js';

const Id = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
// Ranges are checked by the service (a 422 naming the field, with the rule in words).
const Lat = Type.Number({ description: 'the centre’s latitude, -90..90' });
const Lng = Type.Number({ description: 'the centre’s longitude, -180..180' });
const Radius = Type.Number({ description: 'metres, 10..50000' });

export const Polygon = Type.Object(
  {
    type: Type.Literal('Polygon'),
    coordinates: Type.Array(Type.Array(Type.Array(Type.Number(), { maxItems: 3 }), { maxItems: 5000 }), {
      minItems: 1,
      maxItems: 1,
      description: 'one closed ring (no holes) of [longitude, latitude] positions: at least 4, at most 1000, the last equal to the first, not crossing itself',
    }),
  },
  { title: 'SitePolygon', description: 'A GeoJSON Polygon (RFC 7946)' },
);

export const CreateSiteBody = Type.Object(
  {
    name: Name,
    lat: Type.Optional(Lat),
    lng: Type.Optional(Lng),
    radius_m: Type.Optional(Radius),
    area: Type.Optional(Polygon),
  },
  { additionalProperties: false, description: 'A circle (lat, lng, radius_m) or a polygon (area), not both' },
);
export type CreateSiteBody = Static<typeof CreateSiteBody>;

export const UpdateSiteBody = Type.Object(
  {
    name: Type.Optional(Name),
    lat: Type.Optional(Lat),
    lng: Type.Optional(Lng),
    radius_m: Type.Optional(Radius),
    area: Type.Optional(Polygon),
  },
  { additionalProperties: false, minProperties: 1, description: 'area makes it a polygon; lat, lng, radius_m a circle (all three when it was a polygon)' },
);
export type UpdateSiteBody = Static<typeof UpdateSiteBody>;

export const Site = Type.Object(
  {
    id: Type.Integer(),
    org_id: Type.Integer(),
    livemode: Type.Boolean(),
    name: Type.String(),
    kind: Type.Union([Type.Literal('circle'), Type.Literal('polygon')]),
    lat: Nullable(Type.Number({ description: 'a circle’s centre; null for a polygon' })),
    lng: Nullable(Type.Number()),
    radius_m: Nullable(Type.Number()),
    area: Nullable(Polygon),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { title: 'Site', description: 'A place (geofence): devices entering and leaving it are reported (site.enter, site.exit)' },
);
export type Site = Static<typeof Site>;

export const SiteList = Type.Object({ sites: Type.Array(Site) }, { title: 'SiteList' });
export const SiteParams = Type.Object({ org_slug: Type.String({ minLength: 1, maxLength: 100 }), id: Id });
export const DeletedSite = Type.Object({ id: Type.Integer(), deleted: Type.Literal(true) }, { title: 'DeletedSite' });
