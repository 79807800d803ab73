// The API's shapes come from the types generated from its OpenAPI description (clients/typescript,
// `npm run client:generate`): a changed response breaks the build, not the field terminal.
import type * as api from '../../../clients/typescript/schema.js';

export type SignalType = api.Signal['type'];

/** The body of POST /v1/signals. */
export type SignalBody = api.operations['createSignal']['requestBody']['content']['application/json'];

export type Signal = api.Signal;

/** What the terminal keeps of the signed-in user (remembered for offline use). */
export type Me = Pick<api.Me, 'id' | 'name' | 'email'>;

export type Org = api.Org;

/** A position fix of this phone (not an API shape). */
export interface Fix {
  lat: number;
  lng: number;
  accuracy: number;
  at: number;
}

export type MyIncident = api.Incident;

/** An incident the person is paged for (GET /v1/auth/me/pages). */
export type MyPage = api.MyPage;

/** One of the person's on-call shifts (GET /v1/auth/me/shifts). */
export type MyShift = api.MyShiftList['shifts'][number];
