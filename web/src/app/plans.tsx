// The plans, in words (docs/api.md, "Plans and locks"): the admin page's selects and the first admin's welcome.
export const PLANS = [
  { value: 'free', label: 'Free', limits: '3 event types, no shared organizations' },
  { value: 'starter', label: 'Starter', limits: '10 event types' },
  { value: 'agency', label: 'Agency', limits: '1 organization, 5 teams of 25' },
  { value: 'enterprise', label: 'Enterprise', limits: 'no limits' },
] as const;

export const planLabel = (value: string) => PLANS.find((p) => p.value === value)?.label ?? value;

/** The options of a plan select; `limits` adds what each plan allows. */
export function PlanOptions({ limits = false }: { limits?: boolean }) {
  return (
    <>
      {PLANS.map((p) => (
        <option key={p.value} value={p.value}>
          {limits ? `${p.label}: ${p.limits}` : p.label}
        </option>
      ))}
    </>
  );
}
