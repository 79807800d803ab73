// The full-page answer when a booking or management page cannot load: a clear 404 text, or the
// error with a retry. Shared by the booking page and the attendee's management page.
import { t } from '../lib/i18n';

export interface LoadFailure {
  status: number;
  message: string;
}

export function LoadErrorPanel({ failure, notFoundTitle, notFoundText }: { failure: LoadFailure; notFoundTitle: string; notFoundText: string }) {
  const notFound = failure.status === 404;
  return (
    <main class="book-page">
      <section class="panel state" data-testid="load-error">
        <h1>{notFound ? notFoundTitle : t('common.wrong')}</h1>
        <p class="muted">{notFound ? notFoundText : failure.message}</p>
        {!notFound && (
          <button type="button" onClick={() => location.reload()}>
            {t('common.tryAgain')}
          </button>
        )}
      </section>
    </main>
  );
}
