// Which view answers which /app/ address.
import { useEffect, useState } from 'preact/hooks';
import { match, type Loc } from './router';
import { Empty, ErrorAlert, Loading } from './ui';
import type * as ReportsViews from './views/reports';
import { BookingsView } from './views/bookings';
import { DevicesView } from './views/devices';
import { PoliciesView, PolicyEditor } from './views/escalation-policies';
import { IntegrationsView } from './views/integrations';
import { EventTypeEditor } from './views/event-type-editor';
import { EventTypesView } from './views/event-types';
import { IncidentDetailView } from './views/incident-detail';
import { IncidentsView } from './views/incidents';
import { OrgDetailView } from './views/org-detail';
import { OrgsView } from './views/orgs';
import { SettingsView } from './views/settings';
import { SignalsView } from './views/signals';
import { SitesView } from './views/sites';
import { TrackView } from './views/track';
import { AdminView } from './views/admin';
import { ScheduleEditor } from './views/oncall/editor';
import { OnCallView } from './views/oncall/list';
import { ScheduleView } from './views/oncall/schedule';
import { WelcomeView } from './views/welcome';

export function Routes({ loc }: { loc: Loc }) {
  const p = loc.path;
  let m: Record<string, string> | null;
  if (p === '/app/incidents') return <IncidentsView loc={loc} />;
  if (p === '/app/welcome') return <WelcomeView />;
  if ((m = match('/app/incidents/:id', p))) return <IncidentDetailView key={m.id} id={Number(m.id)} />;
  if (p === '/app/oncall') return <OnCallView />;
  if ((m = match('/app/oncall/:org/new', p))) return <ScheduleEditor key={`${m.org}-new`} orgSlug={m.org!} scheduleRef={null} />;
  if ((m = match('/app/oncall/:org/:schedule/edit', p))) return <ScheduleEditor key={`${m.org}-${m.schedule}-edit`} orgSlug={m.org!} scheduleRef={m.schedule!} />;
  if ((m = match('/app/oncall/:org/:schedule', p))) return <ScheduleView key={`${m.org}-${m.schedule}`} orgSlug={m.org!} scheduleRef={m.schedule!} />;
  if (p === '/app/signals') return <SignalsView />;
  if (p === '/app/devices') return <DevicesView />;
  if (p === '/app/sites') return <SitesView />;
  if (p === '/app/track') return <TrackView loc={loc} />;
  if (p === '/app/integrations') return <IntegrationsView />;
  if (p === '/app/bookings') return <BookingsView loc={loc} />;
  if (p === '/app/event-types') return <EventTypesView />;
  if (p === '/app/event-types/new') return <EventTypeEditor id={null} />;
  if ((m = match('/app/event-types/:id', p))) return <EventTypeEditor key={m.id} id={Number(m.id)} />;
  if (p === '/app/orgs') return <OrgsView />;
  if ((m = match('/app/orgs/:slug/escalation-policies', p))) return <PoliciesView key={m.slug} slug={m.slug!} />;
  if ((m = match('/app/orgs/:slug/escalation-policies/new', p))) return <PolicyEditor key={`${m.slug}-new`} slug={m.slug!} id={null} />;
  if ((m = match('/app/orgs/:slug/escalation-policies/:id', p))) return <PolicyEditor key={`${m.slug}-${m.id}`} slug={m.slug!} id={Number(m.id)} />;
  if ((m = match('/app/orgs/:slug', p))) return <OrgDetailView key={m.slug} slug={m.slug!} />;
  if (p === '/app/reports' || match('/app/reports/:org', p)) return <Reports loc={loc} />;
  if (p === '/app/settings') return <SettingsView />;
  if (p === '/app/admin') return <AdminView page={Number(loc.query.get('page')) || 1} />;
  return (
    <Empty title="Page not found">
      There is nothing at this address. <a href="/app/incidents">Go to incidents</a>
    </Empty>
  );
}

type ReportsModule = typeof ReportsViews;
let reportsModule: Promise<ReportsModule> | null = null;

/** The Reports page loads with its first visit, through import(): its charts and tables are not in the code every view loads. */
function Reports({ loc }: { loc: Loc }) {
  const [mod, setMod] = useState<ReportsModule | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    reportsModule ??= import('./views/reports');
    reportsModule.then(setMod, (err: unknown) => {
      reportsModule = null;
      setError(err);
    });
  }, []);
  if (error) return <ErrorAlert error={error} title="The Reports page could not load." />;
  if (!mod) return <Loading label="Loading reports" />;
  const m = match('/app/reports/:org', loc.path);
  return m ? <mod.ReportsView key={m.org} slug={m.org!} loc={loc} /> : <mod.ReportsIndex loc={loc} />;
}
