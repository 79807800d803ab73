// A photo from the field on an incident: a thumbnail that opens the whole picture in a dialog
// (tap or Enter; Escape, the Close button or a tap outside the picture closes it).
import { useRef } from 'preact/hooks';
import { formatDateTime } from '../lib/format';

export interface Photo {
  url: string;
  caption: string | null;
  by: string | null;
  at: string;
}

export function PhotoThumb({ url, caption, by, at }: Photo) {
  const dialog = useRef<HTMLDialogElement>(null);
  const what = caption ? `Photo: ${caption}` : `Photo${by ? ` by ${by}` : ''}`;
  return (
    <div class="photo-thumb-wrap">
      <button type="button" class="photo-thumb" data-testid="photo-thumb" aria-haspopup="dialog" aria-label={`${what}. Enlarge`} onClick={() => dialog.current?.showModal()}>
        <img src={url} alt="" loading="lazy" />
      </button>
      <dialog
        ref={dialog}
        class="photo-dialog"
        data-testid="photo-dialog"
        aria-label={what}
        onClick={(e) => {
          if (e.target === dialog.current) dialog.current?.close();
        }}
      >
        <figure>
          <img src={url} alt={caption ?? `Photo from the field${by ? ` by ${by}` : ''}`} data-testid="photo-full" />
          <figcaption>
            {caption ? <strong>{caption}</strong> : null} <span class="muted">{[by, formatDateTime(at)].filter(Boolean).join(' · ')}</span>
          </figcaption>
        </figure>
        <div class="row">
          <a class="button secondary small" href={url} target="_blank" rel="noopener">
            Open the original
          </a>
          <span class="spacer" />
          <button type="button" class="small" data-testid="photo-close" onClick={() => dialog.current?.close()}>
            Close
          </button>
        </div>
      </dialog>
    </div>
  );
}

/** Every photo of the incident's timeline, as a strip of thumbnails (the incident page's Photos card). */
export function PhotoStrip({ photos }: { photos: Photo[] }) {
  if (photos.length === 0) return null;
  return (
    <div class="card stack" data-testid="incident-photos">
      <h2>Photos</h2>
      <div class="photo-strip">
        {photos.map((p) => (
          <PhotoThumb key={p.url} {...p} />
        ))}
      </div>
    </div>
  );
}
