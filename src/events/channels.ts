/**
 * The live streams' channels, named once. What each carries (event types and payload schemas) is
 * the event catalog, modules/streams/catalog.ts; `ctx.events.publish` is typed from it.
 */
export const CHANNELS = {
  /** Incidents of the caller's orgs: GET /v1/tickets/stream (and /v1/incidents/stream). */
  incidents: 'incidents',
  /** Signals and beacons of the caller's orgs: GET /v1/signals/stream. */
  signals: 'signals',
} as const;

export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];
