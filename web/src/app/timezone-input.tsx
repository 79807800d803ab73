// A searchable time zone field (issue 20): a text input bound to a <datalist> of every IANA zone
// the browser knows, so typing "berl" or "new y" offers Europe/Berlin or America/New_York. A value
// outside the list is flagged in plain words before the server is asked.
import { useMemo } from 'preact/hooks';

let zones: string[] | null = null;
export function allZones(): string[] {
  if (!zones) {
    const intl = Intl as typeof Intl & { supportedValuesOf?: (k: string) => string[] };
    const list = intl.supportedValuesOf ? intl.supportedValuesOf('timeZone') : [];
    zones = [...new Set(['UTC', ...list])];
  }
  return zones;
}

export function isKnownZone(z: string): boolean {
  return allZones().includes(z);
}

export function TimeZoneInput({ id, name, value, onInput, describedBy, serverSaid }: { id: string; name: string; value: string; onInput: (v: string) => void; describedBy?: string; serverSaid?: boolean }) {
  const listId = `${id}-zones`;
  const options = useMemo(() => allZones(), []);
  // The server's own message for the field, when shown, says the same: one message, not two.
  const unknown = !serverSaid && value.trim() !== '' && !isKnownZone(value.trim());
  return (
    <>
      <input
        id={id}
        name={name}
        list={listId}
        autoComplete="off"
        spellcheck={false}
        value={value}
        placeholder="Type to search, e.g. Berlin"
        aria-describedby={unknown ? `${id}-hint` : describedBy}
        onInput={(e) => onInput(e.currentTarget.value)}
        data-testid="timezone-input"
      />
      <datalist id={listId}>
        {options.map((z) => (
          <option key={z} value={z}>
            {z.replace(/_/g, ' ')}
          </option>
        ))}
      </datalist>
      {unknown ? (
        <div class="field-error" id={`${id}-hint`} data-testid="timezone-hint">
          Choose a time zone from the list, such as Europe/Berlin.
        </div>
      ) : null}
    </>
  );
}
