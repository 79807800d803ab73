// The frame of every signed-in view: a sidebar on desktop, a top bar with a collapsible menu on phones.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { PushOffer } from '../lib/push-offer';
import { AlertBanner } from './alert-banner';
import { useLocation } from './router';
import { administeredOrgs, setViewingTestData, useSession, viewingTestData } from './session';

const NAV = [
  { href: '/app/incidents', label: 'Incidents', icon: '!' },
  { href: '/app/oncall', label: 'On call', icon: '☎' },
  { href: '/app/signals', label: 'Signals', icon: '◎' },
  { href: '/app/devices', label: 'Devices', icon: '◈' },
  { href: '/app/sites', label: 'Sites', icon: '⬡' },
  { href: '/app/integrations', label: 'Integrations', icon: '⇄' },
  { href: '/app/bookings', label: 'Bookings', icon: '▦' },
  { href: '/app/event-types', label: 'Event types', icon: '◷' },
  { href: '/app/orgs', label: 'Organizations', icon: '⌂' },
  { href: '/app/settings', label: 'Settings', icon: '⚙' },
];

/** Admins and owners of an org in view (the switcher's, or any): its reports. */
const REPORTS_NAV = { href: '/app/reports', label: 'Reports', icon: '▥' };

/** Instance admins only: users, plans, verification. */
const ADMIN_NAV = { href: '/app/admin', label: 'Administration', icon: '★' };

/** Stripe's "View test data": the whole dashboard switches to the test-mode records (a reload applies it everywhere). */
function TestDataSwitch() {
  const on = viewingTestData();
  return (
    <label class="test-switch" data-testid="test-data-switch">
      <input
        type="checkbox"
        role="switch"
        checked={on}
        onChange={(e) => {
          setViewingTestData(e.currentTarget.checked);
          location.reload();
        }}
      />
      View test data
    </label>
  );
}

function OrgSwitcher() {
  const { orgs, orgId, setOrgId } = useSession();
  if (orgs.length < 2) return null;
  return (
    <div class="org-switcher">
      <label for="org-switcher">Organization</label>
      <select id="org-switcher" data-testid="org-switcher" value={orgId === null ? '' : String(orgId)} onChange={(e) => setOrgId(e.currentTarget.value ? Number(e.currentTarget.value) : null)}>
        <option value="">All organizations</option>
        {orgs.map((o) => (
          <option key={o.id} value={String(o.id)}>
            {o.name}
          </option>
        ))}
      </select>
    </div>
  );
}

export function Layout({ children }: { children: ComponentChildren }) {
  const { me, orgs, orgId, signOut } = useSession();
  // Before Organizations: Reports reads like the views above it, not like a setting.
  const nav = administeredOrgs(orgs, orgId).length > 0 ? [...NAV.slice(0, -2), REPORTS_NAV, ...NAV.slice(-2)] : NAV;
  const { path } = useLocation();
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  return (
    <div class={`shell${viewingTestData() ? ' test-data' : ''}`}>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      {viewingTestData() ? (
        <div class="test-data-banner" role="status" data-testid="test-data-banner">
          <strong>Test data</strong> You are viewing test-mode records (made with sk_test_ keys). Live records are hidden.
        </div>
      ) : null}
      <header class="topbar">
        <a class="app-brand" href="/app/incidents">
          <img src="/icon.svg" alt="" width="28" height="28" /> Muster
        </a>
        <button type="button" class="menu-button secondary" aria-expanded={open} aria-controls="sidebar" onClick={() => setOpen(!open)}>
          <span aria-hidden="true">{open ? '✕' : '☰'}</span> Menu
        </button>
      </header>
      <aside id="sidebar" class={`sidebar${open ? ' open' : ''}`}>
        <a class="app-brand desktop-only" href="/app/incidents">
          <img src="/icon.svg" alt="" width="28" height="28" /> Muster
        </a>
        <nav aria-label="Main">
          {(me.admin ? [...nav, ADMIN_NAV] : nav).map((n) => (
            <a key={n.href} href={n.href} class={`nav-link${path.startsWith(n.href) ? ' active' : ''}`} aria-current={path.startsWith(n.href) ? 'page' : undefined}>
              <span class="nav-icon" aria-hidden="true">
                {n.icon}
              </span>
              {n.label}
            </a>
          ))}
        </nav>
        <OrgSwitcher />
        <TestDataSwitch />
        <div class="account">
          <div class="account-name" title={me.email}>
            <strong>{me.name}</strong>
            <small>{me.email}</small>
          </div>
          <button type="button" class="secondary small" data-testid="logout" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </aside>
      <main class="content" id="main" tabIndex={-1}>
        <AlertBanner />
        <PushOffer />
        {children}
      </main>
    </div>
  );
}
