// The signed-in user, their orgs and the org the views are narrowed to (null: all of them).
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Me, Org } from './types';

export interface Session {
  me: Me;
  orgs: Org[];
  /** The org lists are filtered to, and new records go to; null = all orgs (new records: primary). */
  orgId: number | null;
  setOrgId: (id: number | null) => void;
  reloadOrgs: () => Promise<void>;
  signOut: () => Promise<void>;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const s = useContext(SessionContext);
  if (!s) throw new Error('useSession outside the signed-in app');
  return s;
}

const ORG_KEY = 'muster-dashboard-org';

export function storedOrgId(): number | null {
  const raw = localStorage.getItem(ORG_KEY);
  const n = raw ? Number(raw) : NaN;
  return Number.isInteger(n) && n > 0 ? n : null;
}

export function storeOrgId(id: number | null): void {
  if (id === null) localStorage.removeItem(ORG_KEY);
  else localStorage.setItem(ORG_KEY, String(id));
}

/** The orgs in view (the switcher's one, or all) that this person administers: admins and owners read their reports. */
export const administeredOrgs = (orgs: Org[], orgId: number | null): Org[] => orgs.filter((o) => (o.role === 'owner' || o.role === 'admin') && (orgId === null || o.id === orgId));

export const orgName = (orgs: Org[], id: number): string => orgs.find((o) => o.id === id)?.name ?? `Org ${id}`;

const TEST_KEY = 'muster-dashboard-test-data';

/** The "View test data" switch (remembered per browser): the API calls of the page then carry `x-muster-mode: test`. */
export function viewingTestData(): boolean {
  try {
    return localStorage.getItem(TEST_KEY) === 'on';
  } catch {
    return false;
  }
}

export function setViewingTestData(on: boolean): void {
  if (on) localStorage.setItem(TEST_KEY, 'on');
  else localStorage.removeItem(TEST_KEY);
}
