import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { ConfirmDialog } from '../ui/confirm.js';
import { CopyField } from '../ui/copy-field.js';
import { when } from '../ui/settings-secret.js';
import { Empty, Loading, ProblemMessage } from '../ui/states.js';

type Domain = components['schemas']['OrganizationDomain'];
type Enrollment = Domain['enrollment'];
const PAGE_SIZE = 25;

const ENROLLMENT: Record<Enrollment, string> = {
  none: 'None: nobody joins by this domain',
  suggest: 'Suggest: users with an email at it may join',
  automatic: 'Automatic: users with a verified email at it join as members',
};

/** The organization's domains: add one, publish its TXT record (copyable), verify it, set its enrollment, remove it behind a confirmation. */
export function OrganizationDomains({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const [removing, setRemoving] = useState<Domain | null>(null);
  const [removed, setRemoved] = useState('');
  const domains = useQuery({
    queryKey: ['organization-domains', environmentId, organizationId, cursor ?? ''],
    queryFn: ({ signal }) => serverApi(environmentId).listOrganizationDomains({ organizationId, cursor, limit: PAGE_SIZE }, { signal }),
    placeholderData: keepPreviousData,
  });
  const page = domains.data;
  return (
    <section aria-labelledby="verified-domains">
      <h3 id="verified-domains" className="section-title">Verified domains</h3>
      <p className="muted">
        A domain proves the organization owns the email addresses at it: SSO enforcement and enrollment only apply to verified domains.
        Add a domain, publish its TXT record at your DNS provider, then verify it.
      </p>
      <AddDomain organizationId={organizationId} environmentId={environmentId} />
      {domains.isPending && <Loading what="domains" />}
      <ProblemMessage error={domains.error} />
      <p role="status" className="form-status">{removed}</p>
      {page && page.items.length === 0 && <Empty>This organization has no domains yet.</Empty>}
      {page && page.items.length > 0 && (
        <ul className="enterprise-list" aria-busy={domains.isFetching}>
          {page.items.map((domain) => (
            <DomainItem key={domain.id} domain={domain} environmentId={environmentId} onRemove={() => { setRemoved(''); setRemoving(domain); }} />
          ))}
        </ul>
      )}
      <div className="pager">
        {cursors.length > 0 && <button type="button" onClick={() => setCursors([])}>First domains</button>}
        {page?.hasMore && page.nextCursor && <button type="button" onClick={() => setCursors([...cursors, page.nextCursor!])}>Next domains</button>}
      </div>
      <RemoveDomain domain={removing} environmentId={environmentId}
        onClose={(done) => { setRemoving(null); if (done) setRemoved(`${done.domain} was removed from the organization.`); }} />
    </section>
  );
}

function EnrollmentOptions() {
  return <>{(Object.keys(ENROLLMENT) as Enrollment[]).map((mode) => <option key={mode} value={mode}>{ENROLLMENT[mode]}</option>)}</>;
}

function AddDomain({ organizationId, environmentId }: { organizationId: string; environmentId: string }) {
  const queryClient = useQueryClient();
  const [added, setAdded] = useState('');
  const add = useMutation({
    mutationFn: (body: { domain: string; enrollment: Enrollment }) => serverApi(environmentId).createOrganizationDomain({ organizationId, ...body }),
    onSuccess: async (domain) => {
      setAdded(`${domain.domain} was added. Publish its TXT record, then verify it.`);
      await queryClient.invalidateQueries({ queryKey: ['organization-domains', environmentId, organizationId] });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    setAdded('');
    add.mutate({ domain: String(data.get('domain')).trim(), enrollment: String(data.get('enrollment')) as Enrollment }, { onSuccess: () => form.reset() });
  };
  return (
    <>
      <form onSubmit={onSubmit} className="inline-form" aria-labelledby="add-domain">
        <h4 id="add-domain" className="form-title">Add a domain</h4>
        <div className="field">
          <label htmlFor="add-domain-name">Domain</label>
          <input id="add-domain-name" name="domain" required maxLength={300} autoComplete="off" placeholder="example.com" aria-describedby="add-domain-hint" />
          <span id="add-domain-hint" className="hint">Not a public mailbox provider such as gmail.com.</span>
        </div>
        <div className="field">
          <label htmlFor="add-domain-enrollment">Enrollment</label>
          <select id="add-domain-enrollment" name="enrollment" defaultValue="none"><EnrollmentOptions /></select>
        </div>
        <button type="submit" className="primary" disabled={add.isPending}>{add.isPending ? 'Adding…' : 'Add domain'}</button>
      </form>
      <p role="status" className="form-status">{added}</p>
      <ProblemMessage error={add.error} />
    </>
  );
}

function DomainItem({ domain, environmentId, onRemove }: { domain: Domain; environmentId: string; onRemove: () => void }) {
  const headingId = useId();
  const queryClient = useQueryClient();
  const [said, setSaid] = useState('');
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['organization-domains', environmentId, domain.organizationId] });
  const verify = useMutation({
    mutationFn: () => serverApi(environmentId).verifyOrganizationDomain({ organizationId: domain.organizationId, domainId: domain.id }),
    onSuccess: async (verified) => { await refresh(); setSaid(`${verified.domain} is verified.`); },
  });
  const change = useMutation({
    mutationFn: (enrollment: Enrollment) => serverApi(environmentId).updateOrganizationDomain({ organizationId: domain.organizationId, domainId: domain.id, enrollment }),
    onSuccess: async (updated) => { await refresh(); setSaid(`Enrollment of ${updated.domain} saved.`); },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setSaid('');
    change.mutate(String(new FormData(event.currentTarget).get('enrollment')) as Enrollment);
  };
  return (
    <li>
      <article aria-labelledby={headingId}>
        <h4 id={headingId} className="item-title">{domain.domain} <span className={`badge ${domain.verified ? 'badge-active' : 'badge-invitation-pending'}`}>{domain.verified ? 'Verified' : 'Not verified'}</span></h4>
        {domain.verified
          ? <p className="muted">Verified {when(domain.verifiedAt)}. The TXT record may stay or go.</p>
          : (
            <div className="copy-fields">
              <p>Publish this DNS record, then choose Verify:</p>
              <p>Type: <code>TXT</code></p>
              <CopyField label={`TXT record name for ${domain.domain}`} value={domain.verification.name} />
              <CopyField label={`TXT record value for ${domain.verification.name}`} value={domain.verification.value} />
            </div>
          )}
        <form onSubmit={onSubmit} className="row-actions" key={domain.enrollment}>
          <label htmlFor={`${headingId}-enrollment`}>Enrollment</label>
          <select id={`${headingId}-enrollment`} name="enrollment" defaultValue={domain.enrollment}><EnrollmentOptions /></select>
          <button type="submit" disabled={change.isPending}>{change.isPending ? 'Saving…' : 'Save enrollment'}</button>
        </form>
        <div className="actions">
          {!domain.verified && (
            <button type="button" className="primary" onClick={() => { setSaid(''); verify.mutate(); }} disabled={verify.isPending}>
              {verify.isPending ? 'Checking DNS…' : `Verify ${domain.domain}`}
            </button>
          )}
          <button type="button" className="danger" onClick={onRemove}>Remove {domain.domain}</button>
        </div>
        <p role="status" className="row-status">{said}</p>
        <ProblemMessage error={verify.error ?? change.error} />
      </article>
    </li>
  );
}

function RemoveDomain({ domain, environmentId, onClose }: { domain: Domain | null; environmentId: string; onClose: (done?: Domain) => void }) {
  const queryClient = useQueryClient();
  const remove = useMutation({
    mutationFn: async (target: Domain) => {
      await serverApi(environmentId).deleteOrganizationDomain({ organizationId: target.organizationId, domainId: target.id });
      return target;
    },
    onSuccess: async (done) => {
      onClose(done);
      await queryClient.invalidateQueries({ queryKey: ['organization-domains', environmentId, done.organizationId] });
    },
  });
  return (
    <ConfirmDialog open={domain !== null} title="Remove this domain?" confirmLabel="Remove domain" busy={remove.isPending}
      onConfirm={() => domain && remove.mutate(domain)} onCancel={() => { remove.reset(); onClose(); }}>
      <p>{domain?.domain} will no longer be the organization&apos;s: it stops enrolling users and enforcing SSO. Members stay members.</p>
      <ProblemMessage error={remove.error} />
    </ConfirmDialog>
  );
}
