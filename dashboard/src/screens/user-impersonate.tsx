import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { serverApi, type User } from '../api/gatehouse.js';
import { Loading, ProblemMessage } from '../ui/states.js';

/**
 * Sign in as the user: a reason is required, this month's quota is shown, and the minted link opens in a new
 * tab (no opener). The signed-in operator is the actor the ledger and the trail name.
 */
export function Impersonate({ user, environmentId }: { user: User; environmentId: string }) {
  const queryClient = useQueryClient();
  const usageKey = ['impersonation-usage', environmentId];
  const usage = useQuery({ queryKey: usageKey, queryFn: ({ signal }) => serverApi(environmentId).getImpersonationUsage(undefined, { signal }) });
  const [reason, setReason] = useState('');
  const [missingReason, setMissingReason] = useState(false);
  const [link, setLink] = useState<string | null>(null);
  const mint = useMutation({
    mutationFn: () => serverApi(environmentId).createImpersonationToken({ userId: user.id, reason: reason.trim() }),
    onSuccess: async (minted) => {
      setLink(minted.url);
      setReason('');
      if (minted.url) window.open(minted.url, '_blank', 'noopener');
      await queryClient.invalidateQueries({ queryKey: ['user-audit', environmentId, user.id] });
    },
    // A refused mint (say, the quota spent meanwhile) changes the count shown too.
    onSettled: () => queryClient.invalidateQueries({ queryKey: usageKey }),
  });
  const onSubmit = (event: FormEvent) => {
    event.preventDefault();
    setLink(null);
    if (reason.trim() === '') { setMissingReason(true); return; }
    setMissingReason(false);
    mint.mutate();
  };
  if (user.status !== 'active') return null;
  const spent = usage.data !== undefined && usage.data.remaining === 0;
  return (
    <section aria-labelledby="impersonate">
      <h2 id="impersonate">Impersonate</h2>
      {usage.isPending && <Loading what="the impersonation quota" />}
      <ProblemMessage error={usage.error} />
      {usage.data && (
        <p id="impersonation-quota">
          {usage.data.used} of {usage.data.quota} impersonations used in {usage.data.month} (UTC); {usage.data.remaining} left until {new Date(usage.data.resetsAt).toLocaleDateString()}.
        </p>
      )}
      <form onSubmit={onSubmit} className="stack user-impersonate" noValidate>
        <label htmlFor="impersonation-reason">Reason (required)</label>
        <textarea id="impersonation-reason" name="reason" rows={2} maxLength={1000} required value={reason}
          aria-invalid={missingReason ? true : undefined} aria-describedby={`impersonation-reason-help${missingReason ? ' impersonation-reason-error' : ''}`}
          onChange={(event) => { setReason(event.target.value); if (event.target.value.trim()) setMissingReason(false); }} />
        <p id="impersonation-reason-help" className="muted">Recorded in the ledger and the audit trail, e.g. a ticket number.</p>
        {missingReason && <p id="impersonation-reason-error" role="alert" className="user-field-error">Give a reason for signing in as this user.</p>}
        <div className="actions">
          <button type="submit" className="primary" disabled={mint.isPending || spent} aria-describedby="impersonation-quota">
            {mint.isPending ? 'Opening…' : 'Impersonate in a new tab'}
          </button>
        </div>
      </form>
      <ProblemMessage error={mint.error} />
      <div role="status">
        {mint.isSuccess && link && (
          <p>Opened a new tab signed in as {user.email ?? 'the user'}. If it did not open, use <a href={link} target="_blank" rel="noopener noreferrer">this one-time link</a> (it works once, within 10 minutes).</p>
        )}
        {mint.isSuccess && !link && (
          <p>The token was minted, but the environment has no impersonation landing URL: set <code>impersonationLandingUrl</code> in its settings to open a tab.</p>
        )}
      </div>
    </section>
  );
}
