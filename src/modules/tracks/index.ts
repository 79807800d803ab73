// The public surface of modules/tracks: other modules import only this file (docs/architecture.md, "Dependency rules").
export { createTrackRecorder, type TrackRecorder } from './recorder.js';
export { tracksRoutes } from './tracks.routes.js';
export { deleteTracksOf, exportTracks, sweepTracks } from './tracks.service.js';
export type { TracksTables, PositionTracksTable } from './tracks.tables.js';
