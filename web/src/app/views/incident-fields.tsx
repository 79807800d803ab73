// Fields shared by the forms that create an incident (the incidents page and "create incident
// here" on the map): the priority and, for people in several orgs, the organization.
import type { ComponentChildren } from 'preact';
import type { Org } from '../types';
import { FieldError, PRIORITY_LABEL } from '../ui';

export function PriorityField({ id, value, onChange, children }: { id: string; value: string; onChange: (v: string) => void; children?: ComponentChildren }) {
  return (
    <div class="field">
      <label for={id}>Priority</label>
      <select id={id} name="priority" value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {Object.entries(PRIORITY_LABEL).map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
      {children}
    </div>
  );
}

/** The organization to create in; nothing when the person belongs to one only. */
export function OrgField({ id, orgs, value, onChange, error }: { id: string; orgs: Org[]; value: string; onChange: (v: string) => void; error: unknown }) {
  if (orgs.length <= 1) return null;
  return (
    <div class="field">
      <label for={id}>Organization</label>
      <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {orgs.map((o) => (
          <option key={o.id} value={String(o.id)}>
            {o.name}
          </option>
        ))}
      </select>
      <FieldError error={error} name="org_id" />
    </div>
  );
}
