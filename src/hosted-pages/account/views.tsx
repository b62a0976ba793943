/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { DataRequest } from '../../data-requests/schemas.js';
import type { EmailAddress } from '../../email-addresses/schemas.js';
import type { Identity } from '../../oauth/schemas.js';
import type { ClientOrganization } from '../../organizations/schemas.js';
import type { MessageKey } from '../../platform/i18n/catalogue.js';
import type { User } from '../../users/schemas.js';
import { AccountLayout } from '../views/account-layout.js';
import { Alert, Field, Notice, PageForm, Submit, type PageContext } from '../views/layout.js';

/** Where the "confirm your password" form sends the browser back to: the page whose change asked for it. */
export const REAUTH_RETURNS = ['/account', '/account/data', '/account/delete'] as const;
export type ReauthReturn = (typeof REAUTH_RETURNS)[number];

/** What every account page may show above its sections: a refusal, a notice, and the password form a sensitive change asks for. */
export interface TabState { ctx: PageContext; error?: string; notice?: string; reauth?: boolean }

export interface ProfileData {
  user: User;
  addresses: EmailAddress[];
  identities: (Identity & { providerName: string })[];
  organizations: ClientOrganization[];
}
export interface DataTabData { requests: DataRequest[]; selfDeletionEnabled: boolean }

/** A button of a row (remove, unlink, leave): one form per action, so each works without script. */
function RowAction({ ctx, action, label, secondary = true }: { ctx: PageContext; action: string; label: string; secondary?: boolean }) {
  return (
    <PageForm ctx={ctx} action={action}>
      <button type="submit" class={secondary ? 'secondary inline' : 'inline'}>{label}</button>
    </PageForm>
  );
}

/** Asks for the password again; the browser comes back to `then` to repeat the change. */
function ReauthenticateForm({ ctx, then }: { ctx: PageContext; then: ReauthReturn }) {
  const { t } = ctx;
  return (
    <section aria-labelledby="reauth-heading" class="reauth">
      <h2 id="reauth-heading">{t('account.reauth.heading')}</h2>
      <p>{t('account.reauth.intro')}</p>
      <PageForm ctx={ctx} action="/account/reauthenticate">
        <input type="hidden" name="then" value={then} />
        <Field id="reauth-password" name="password" label={t('field.password')} type="password" autocomplete="current-password" />
        <Submit label={t('account.button.confirm')} />
      </PageForm>
    </section>
  );
}

function Messages({ state, then }: { state: TabState; then: ReauthReturn }) {
  return (
    <>
      <Alert message={state.error} />
      <Notice message={state.notice} />
      {state.reauth && <ReauthenticateForm ctx={state.ctx} then={then} />}
    </>
  );
}

function Section({ id, title, children }: { id: string; title: string; children: ComponentChildren }) {
  return <section aria-labelledby={id}><h2 id={id}>{title}</h2>{children}</section>;
}

function ProfileForm({ ctx, user }: { ctx: PageContext; user: User }) {
  const { t } = ctx;
  const locales: [string, MessageKey][] = [['', 'account.locale.none'], ['en', 'account.locale.en'], ['da', 'account.locale.da']];
  return (
    <Section id="profile-heading" title={t('account.profile.heading')}>
      {user.email && <p>{t('account.profile.email', { email: user.email })}</p>}
      <PageForm ctx={ctx} action="/account/profile">
        <Field id="firstName" label={t('account.field.firstName')} value={user.firstName ?? ''} autocomplete="given-name" required={false} />
        <Field id="lastName" label={t('account.field.lastName')} value={user.lastName ?? ''} autocomplete="family-name" required={false} />
        <div class="field">
          <label for="locale-choice">{t('account.field.locale')}</label>
          <select id="locale-choice" name="locale">
            {locales.map(([value, label]) => <option key={value} value={value} selected={(user.locale ?? '') === value}>{t(label)}</option>)}
          </select>
        </div>
        <Submit label={t('account.button.save')} />
      </PageForm>
    </Section>
  );
}

function EmailAddresses({ ctx, addresses }: { ctx: PageContext; addresses: EmailAddress[] }) {
  const { t } = ctx;
  return (
    <Section id="emails-heading" title={t('account.emails.heading')}>
      <ul class="rows">
        {addresses.map((a) => (
          <li key={a.id} class="row">
            <p class="row-title">
              <span>{a.email}</span>
              {a.primary && <span class="badge">{t('account.emails.primary')}</span>}
              <span class="badge">{t(a.verified ? 'account.emails.verified' : 'account.emails.unverified')}</span>
            </p>
            {!a.verified && (
              <PageForm ctx={ctx} action={`/account/email-addresses/${a.id}/verify`}>
                <p class="hint">{t('account.emails.verifyHint', { email: a.email })}</p>
                <Field id={`code-${a.id}`} name="code" label={t('field.code')} autocomplete="one-time-code" inputMode="numeric" />
                <Submit label={t('button.verify')} />
              </PageForm>
            )}
            <div class="row-actions">
              {a.verified && !a.primary && <RowAction ctx={ctx} action={`/account/email-addresses/${a.id}/make-primary`} label={t('account.button.makePrimary')} />}
              {!a.primary && <RowAction ctx={ctx} action={`/account/email-addresses/${a.id}/remove`} label={t('account.button.remove')} />}
            </div>
          </li>
        ))}
      </ul>
      <PageForm ctx={ctx} action="/account/email-addresses">
        <Field id="newEmail" name="email" label={t('account.field.newEmail')} type="email" autocomplete="email" />
        <Submit label={t('account.button.addEmail')} />
      </PageForm>
    </Section>
  );
}

function Identities({ ctx, identities }: { ctx: PageContext; identities: ProfileData['identities'] }) {
  const { t } = ctx;
  return (
    <Section id="identities-heading" title={t('account.identities.heading')}>
      {identities.length === 0 ? <p>{t('account.identities.none')}</p> : (
        <ul class="rows">
          {identities.map((i) => (
            <li key={i.id} class="row">
              <p class="row-title"><span>{i.providerName}</span>{i.email && <span class="badge">{i.email}</span>}</p>
              <div class="row-actions"><RowAction ctx={ctx} action={`/account/identities/${i.id}/unlink`} label={t('account.button.unlink')} /></div>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

function Organizations({ ctx, organizations }: { ctx: PageContext; organizations: ClientOrganization[] }) {
  const { t } = ctx;
  return (
    <Section id="organizations-heading" title={t('account.organizations.heading')}>
      {organizations.length === 0 ? <p>{t('account.organizations.none')}</p> : (
        <ul class="rows">
          {organizations.map((o) => (
            <li key={o.id} class="row">
              <p class="row-title"><span>{o.name}</span><span class="badge">{t('account.organizations.role', { role: o.roleName ?? o.role })}</span></p>
              <div class="row-actions"><RowAction ctx={ctx} action={`/account/organizations/${o.id}/leave`} label={t('account.button.leave')} /></div>
            </li>
          ))}
        </ul>
      )}
    </Section>
  );
}

/** /account: profile, email addresses, linked identities, organizations. */
export function ProfileTab({ data, ...state }: TabState & { data: ProfileData }) {
  const { ctx } = state;
  return (
    <AccountLayout ctx={ctx} current="/account" title={ctx.t('account.title')}>
      <Messages state={state} then="/account" />
      <ProfileForm ctx={ctx} user={data.user} />
      <EmailAddresses ctx={ctx} addresses={data.addresses} />
      <Identities ctx={ctx} identities={data.identities} />
      <Organizations ctx={ctx} organizations={data.organizations} />
    </AccountLayout>
  );
}

/** A moment as the reader's language writes it, in UTC (the page does not know the reader's zone). */
const when = (ctx: PageContext, iso: string) =>
  new Intl.DateTimeFormat(ctx.locale === 'da' ? 'da-DK' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso)) + ' UTC';

function DataRequestRow({ ctx, request }: { ctx: PageContext; request: DataRequest }) {
  const { t } = ctx;
  return (
    <tr>
      <td>{t(`account.data.type.${request.type}`)}</td>
      <td>
        {t(`account.data.status.${request.status}`)}
        {request.status === 'scheduled' && request.completesAt && <> · {t('account.data.runsAt', { date: when(ctx, request.completesAt) })}</>}
      </td>
      <td>{when(ctx, request.createdAt)}</td>
      <td>
        {request.status === 'ready' && <a href={`/account/data-requests/${request.id}/download`}>{t('account.data.download')}</a>}
        {request.status === 'scheduled' && <RowAction ctx={ctx} action={`/account/data-requests/${request.id}/cancel`} label={t('account.button.cancelErasure')} />}
      </td>
    </tr>
  );
}

function DataRequests({ ctx, requests }: { ctx: PageContext; requests: DataRequest[] }) {
  const { t } = ctx;
  return (
    <Section id="data-heading" title={t('account.data.heading')}>
      <p>{t('account.data.intro')}</p>
      <div class="row-actions">
        <PageForm ctx={ctx} action="/account/data-requests">
          <input type="hidden" name="type" value="export" />
          <button type="submit" class="inline">{t('account.button.requestExport')}</button>
        </PageForm>
        <PageForm ctx={ctx} action="/account/data-requests">
          <input type="hidden" name="type" value="erasure" />
          <button type="submit" class="secondary inline">{t('account.button.requestErasure')}</button>
        </PageForm>
      </div>
      {requests.length === 0 ? <p>{t('account.data.none')}</p> : (
        <table class="requests">
          <thead>
            <tr>
              <th scope="col">{t('account.data.type')}</th>
              <th scope="col">{t('account.data.status')}</th>
              <th scope="col">{t('account.data.requested')}</th>
              <th scope="col">{t('account.data.action')}</th>
            </tr>
          </thead>
          <tbody>{requests.map((r) => <DataRequestRow key={r.id} ctx={ctx} request={r} />)}</tbody>
        </table>
      )}
    </Section>
  );
}

/** /account/data: data requests, and the way to delete the account. */
export function DataTab({ data, ...state }: TabState & { data: DataTabData }) {
  const { ctx } = state;
  const { t } = ctx;
  return (
    <AccountLayout ctx={ctx} current="/account/data" title={t('account.dataTitle')}>
      <Messages state={state} then="/account/data" />
      <DataRequests ctx={ctx} requests={data.requests} />
      <Section id="delete-heading" title={t('account.delete.heading')}>
        {data.selfDeletionEnabled ? (
          <>
            <p>{t('account.delete.intro')}</p>
            <a class="button secondary inline" href={`/account/delete${ctx.carried}`}>{t('account.delete.link')}</a>
          </>
        ) : <p>{t('account.delete.disabled', { product: ctx.productName })}</p>}
      </Section>
    </AccountLayout>
  );
}

/** /account/delete: the confirmation step before the account is deleted. */
export function DeleteAccountPage(state: TabState) {
  const { ctx } = state;
  const { t } = ctx;
  return (
    <AccountLayout ctx={ctx} current="/account/data" title={t('account.delete.title')}>
      <Messages state={state} then="/account/delete" />
      <p>{t('account.delete.intro')}</p>
      <PageForm ctx={ctx} action="/account/delete">
        <div class="field checkbox">
          <input id="confirm-delete" name="confirm" type="checkbox" value="true" required />
          <label for="confirm-delete">{t('account.delete.confirm')}</label>
        </div>
        <Submit label={t('account.button.delete')} />
      </PageForm>
      <nav class="links"><a href={`/account/data${ctx.carried}`}>{t('account.delete.keep')}</a></nav>
    </AccountLayout>
  );
}

/** The account page when the session may do nothing but enrol a second factor (mfa policy "required"). */
export function RestrictedTab({ ctx, current, error }: { ctx: PageContext; current: '/account' | '/account/data'; error: string }) {
  return (
    <AccountLayout ctx={ctx} current={current} title={ctx.t(current === '/account' ? 'account.title' : 'account.dataTitle')}>
      <Alert message={error} />
    </AccountLayout>
  );
}
