import { useQuery } from '@tanstack/react-query';
import { getRouteApi } from '@tanstack/react-router';
import { adminApi } from '../api/gatehouse.js';
import { Page } from '../ui/page.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';
import { formatTime } from './audit-parts.js';

const route = getRouteApi('/signed-in/environments/$environmentId/outbox');

/**
 * The development mail outbox: without GATEHOUSE_SMTP_URL, Gatehouse keeps the environment's mail here to
 * read instead of sending it. Only the text part is shown: the dashboard's CSP frames nothing, so the HTML
 * part could not be rendered apart from the dashboard; its source is shown as text on request.
 */
export function OutboxScreen() {
  const { environmentId } = route.useParams();
  const outbox = useQuery({
    queryKey: ['outbox', environmentId],
    queryFn: ({ signal }) => adminApi.readOutbox({ id: environmentId }, { signal }),
  });
  const data = outbox.data;
  return (
    <Page title="Mail outbox">
      {outbox.isPending && <Loading what="the outbox" />}
      <ProblemMessage error={outbox.error} />
      {data?.mode === 'delivering' && (
        <p className="notice">
          The outbox is not available: this Gatehouse sends mail through an SMTP server (GATEHOUSE_SMTP_URL is set), so no mail is kept
          here to read. Look in the mailbox of the recipient instead.
        </p>
      )}
      {data?.mode === 'catching' && (
        <>
          <p className="muted">
            No SMTP server is configured, so Gatehouse sends no mail: each environment&apos;s mail is kept here, newest first, for an hour.
            This suits development only.
          </p>
          <div className="actions">
            <button type="button" onClick={() => void outbox.refetch()} disabled={outbox.isFetching}>{outbox.isFetching ? 'Refreshing…' : 'Refresh'}</button>
          </div>
          {data.items.length === 0 && <Empty>No mail has been caught for this environment in the last hour.</Empty>}
          {data.items.map((mail) => (
            <article key={mail.id} className="outbox-mail" aria-labelledby={`mail-${mail.id}`}>
              <h2 id={`mail-${mail.id}`}>{mail.subject || '(no subject)'}</h2>
              <dl className="fields">
                <dt>To</dt><dd>{mail.to}</dd>
                <dt>Sent</dt><dd><time dateTime={mail.createdAt}>{formatTime(mail.createdAt)}</time></dd>
              </dl>
              <pre tabIndex={0} aria-label={`Text of “${mail.subject}” to ${mail.to}`} className="mail-text">{mail.text}</pre>
              {mail.html && (
                <details>
                  <summary>HTML source (not rendered)</summary>
                  <pre tabIndex={0} aria-label={`HTML source of “${mail.subject}” to ${mail.to}`}>{mail.html}</pre>
                </details>
              )}
            </article>
          ))}
        </>
      )}
    </Page>
  );
}
