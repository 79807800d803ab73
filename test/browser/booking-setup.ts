// Shared set-up of the public page browser tests: a host on the agency plan with personal event
// types (one needing confirmation) and a team event type, all open around the clock so that slots
// exist tomorrow in any zone; plus small helpers to pick a day and a slot.
import assert from 'node:assert/strict';
import type { FrameLocator, Page } from 'playwright-core';
import { castWorld, cookieOf } from '../world.js';
import { call, serverApi, type ApiUser, type Server } from './harness.js';

export interface Booking {
  id: string;
  status: string;
  event_type_id: number;
  attendee_name: string;
  attendee_email: string;
  start_time: string;
  end_time: string;
  timezone: string;
  requires_confirmation: boolean;
  cancel_url: string;
  reschedule_url: string;
}

export interface BookingWorld {
  admin: ApiUser;
  host: ApiUser;
  org: string;
  team: string;
  /** Personal, confirmed at once; personal, requires confirmation; team. */
  intro: number;
  approval: number;
  support: number;
}

const ALL_DAY = { timezone: 'UTC', weekly: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((day) => ({ day, start: '00:00', end: '24:00' })) };

/** The host, their event types and their org's team, made through the server's API by the world builder. */
export async function bookingWorld(server: Server): Promise<BookingWorld> {
  const api = serverApi(server);
  const { people, org } = await castWorld(api, {
    people: { admin: { name: 'Instance Admin' }, host: { name: 'Alice Morgan', plan: 'agency' } },
    // The host makes the team, so is its active member already (issue 33).
    org: { by: 'host', name: 'Acme Field Services', team: { name: 'Support Desk', fields: { routing: 'round_robin' } } },
  });
  const { admin, host } = people;
  const et = (body: object, path = '/v1/event-types') =>
    api.ok<{ id: number }>(cookieOf(host), 'POST', path, { duration_minutes: 30, min_notice_hours: 0, max_advance_days: 60, availability: ALL_DAY, ...body });
  const intro = await et({ name: 'Intro call', slug: 'intro', location_type: 'video', description: 'A 30 minute video call to see whether we are a good fit.\nBring your questions.' });
  const approval = await et({ name: 'Site visit', slug: 'visit', location_type: 'in_person', requires_confirmation: true });
  const support = await et({ name: 'Support session', slug: 'support', location_type: 'phone' }, `/v1/orgs/${org!.slug}/teams/${org!.team!}/event-types`);
  return { admin, host, org: org!.slug, team: org!.team!, intro: intro.id, approval: approval.id, support: support.id };
}

/** YYYY-MM-DD of now plus `days` in a zone. */
export function dayIn(zone: string, days: number): string {
  return new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: zone }).format(new Date(Date.now() + days * 86_400_000));
}

export const timeIn = (iso: string, zone: string) => new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', timeZone: zone }).format(new Date(iso));

type Scope = Page | FrameLocator;

/**
 * Picks `date` in the calendar (moving to the next month when needed) and the slot at `index`;
 * returns the slot's UTC start and the time the page showed for it.
 */
export async function pickSlot(scope: Scope, date: string, index: number): Promise<{ start: string; shown: string; first: { start: string; shown: string } }> {
  const day = scope.locator(`[data-testid="day"][data-date="${date}"]`);
  if ((await day.count()) === 0) await scope.getByRole('button', { name: 'Next month' }).click();
  await day.click();
  await scope.getByTestId('selected-day').waitFor();
  const slots = scope.locator('[data-testid="slot"]');
  await slots.nth(index).waitFor();
  const firstSlot = slots.first();
  const first = { start: (await firstSlot.getAttribute('data-start'))!, shown: (await firstSlot.innerText()).trim() };
  const slot = slots.nth(index);
  const start = (await slot.getAttribute('data-start'))!;
  const shown = (await slot.innerText()).trim();
  await slot.click();
  return { start, shown, first };
}

export async function fillForm(scope: Scope, name: string, email: string, notes = ''): Promise<void> {
  await scope.getByLabel('Name').fill(name);
  await scope.getByLabel('Email').fill(email);
  if (notes) await scope.getByLabel('Notes').fill(notes);
}

export async function hostBookings(server: Server, host: ApiUser): Promise<Booking[]> {
  const r = await call<{ bookings: Booking[] }>(server, 'GET', '/v1/bookings?limit=200', undefined, host.cookie);
  assert.equal(r.status, 200);
  return r.body.bookings;
}

/**
 * These tests send many public requests from one address within a minute (every page load reads
 * the event and a few days of slots): limits high enough never to be met.
 */
