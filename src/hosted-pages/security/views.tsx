/** @jsxImportSource preact */
import { createRequire } from 'node:module';
import type { Factor } from '../../factors/schemas.js';
import type { Passkey } from '../../passkeys/schemas.js';
import type { Locale, Translate } from '../../platform/i18n/catalogue.js';
import type { Session } from '../../sessions/schemas.js';
import { AccountLayout } from '../views/account-layout.js';
import { Alert, Field, Notice, PageForm, Submit, type PageContext } from '../views/layout.js';

export const SECURITY_PATH = '/account/security';

/** What the tab shows, as the security service's overview answers it. */
export interface SecurityOverview {
  mfa: { factors: Factor[]; backupCodesRemaining: number };
  passkeys: Passkey[];
  /** Null for a session held to enrolment, which may not list sessions (as on the API). */
  sessions: Session[] | null;
  hasPassword: boolean;
}

/** What the environment lets the tab offer. */
export interface SecurityFeatures { totp: boolean; passkeys: boolean }

const formatDate = (locale: Locale, iso: string) =>
  `${new Intl.DateTimeFormat(locale === 'da' ? 'da-DK' : 'en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso))} UTC`;

const BROWSERS: [RegExp, string][] = [[/Edg\//, 'Edge'], [/OPR\//, 'Opera'], [/Firefox\//, 'Firefox'], [/Chrom(e|ium)\//, 'Chrome'], [/Safari\//, 'Safari']];
const SYSTEMS: [RegExp, string][] = [[/Android/, 'Android'], [/iPhone|iPad/, 'iOS'], [/Windows/, 'Windows'], [/Mac OS X/, 'macOS'], [/CrOS/, 'ChromeOS'], [/Linux/, 'Linux']];
const firstMatch = (table: [RegExp, string][], text: string) => table.find(([pattern]) => pattern.test(text))?.[1];

/** A session's device as people name it ("Firefox on Windows"), from its user agent; the raw header says little to most. */
export function deviceOf(t: Translate, userAgent: string | null): string {
  const browser = firstMatch(BROWSERS, userAgent ?? '');
  const os = firstMatch(SYSTEMS, userAgent ?? '');
  if (browser && os) return t('security.sessions.device', { browser, os });
  return browser ?? os ?? t('security.sessions.unknownDevice');
}

/** qrcode (with pngjs, 57 files) loads at the first QR code drawn rather than at every start; it is CommonJS, so synchronously. */
const qrCodeLibrary = () => createRequire(import.meta.url)('qrcode') as typeof import('qrcode');

/**
 * The QR code of the otpauth URI as inline SVG: the library encodes, the page draws one path of its dark
 * modules (a run per row), so nothing is parsed from markup and the CSP needs neither inline styles nor data: URLs.
 */
export function QrCode({ text, label }: { text: string; label: string }) {
  const { modules } = qrCodeLibrary().create(text, { errorCorrectionLevel: 'M' });
  const margin = 2;
  const runs: string[] = [];
  for (let row = 0; row < modules.size; row += 1) {
    for (let col = 0; col < modules.size;) {
      if (!modules.get(row, col)) { col += 1; continue; }
      const start = col;
      while (col < modules.size && modules.get(row, col)) col += 1;
      runs.push(`M${start + margin} ${row + margin}h${col - start}v1h-${col - start}z`);
    }
  }
  const side = modules.size + 2 * margin;
  return (
    <svg class="qr" role="img" aria-label={label} viewBox={`0 0 ${side} ${side}`} shape-rendering="crispEdges" xmlns="http://www.w3.org/2000/svg">
      <rect width={side} height={side} fill="#fff" />
      <path d={runs.join('')} fill="#000" />
    </svg>
  );
}

/** A form whose one button does what it says (remove, sign out), posting the CSRF token. */
const ActionForm = ({ ctx, action, label }: { ctx: PageContext; action: string; label: string }) => (
  <PageForm ctx={ctx} action={action}><button type="submit" class="secondary">{label}</button></PageForm>
);

function ReauthenticateSection({ ctx }: { ctx: PageContext }) {
  const { t } = ctx;
  return (
    <section aria-labelledby="reauth-heading">
      <h2 id="reauth-heading">{t('security.reauth.heading')}</h2>
      <p>{t('security.reauth.intro')}</p>
      <PageForm ctx={ctx} action={`${SECURITY_PATH}/reauthenticate`}>
        <Field id="reauth-password" name="password" label={t('field.password')} type="password" autocomplete="current-password" />
        <Submit label={t('security.reauth.submit')} />
      </PageForm>
    </section>
  );
}

function PasswordSection({ ctx, hasPassword }: { ctx: PageContext; hasPassword: boolean }) {
  const { t } = ctx;
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">{t('security.password.heading')}</h2>
      <PageForm ctx={ctx} action={`${SECURITY_PATH}/password`}>
        {hasPassword ? <Field id="currentPassword" label={t('security.password.current')} type="password" autocomplete="current-password" />
          : <p>{t('security.password.none')}</p>}
        <Field id="newPassword" label={t('field.newPassword')} type="password" autocomplete="new-password" />
        <div class="field checkbox">
          <input id="signOutOtherSessions" name="signOutOtherSessions" type="checkbox" value="true" />
          <label for="signOutOtherSessions">{t('security.password.signOutOthers')}</label>
        </div>
        <Submit label={t('security.password.submit')} />
      </PageForm>
    </section>
  );
}

function FactorsSection({ ctx, mfa, offered }: { ctx: PageContext; mfa: SecurityOverview['mfa']; offered: boolean }) {
  const { t } = ctx;
  if (!offered && mfa.factors.length === 0) return null;
  return (
    <section aria-labelledby="factors-heading">
      <h2 id="factors-heading">{t('security.factors.heading')}</h2>
      {mfa.factors.length === 0 ? <p>{t('security.factors.none')}</p> : (
        <ul class="items">
          {mfa.factors.map((factor) => (
            <li key={factor.id}>
              <p><strong>{factor.name}</strong></p>
              <p class="meta">{t('security.factors.added', { date: formatDate(ctx.locale, factor.createdAt) })}</p>
              <ActionForm ctx={ctx} action={`${SECURITY_PATH}/factors/${factor.id}/remove`} label={t('security.factors.remove', { name: factor.name })} />
            </li>
          ))}
        </ul>
      )}
      {mfa.factors.length > 0 && <p>{t('security.factors.backupCodesLeft', { count: String(mfa.backupCodesRemaining) })}</p>}
      {mfa.factors.length > 0 ? <ActionForm ctx={ctx} action={`${SECURITY_PATH}/backup-codes`} label={t('security.factors.newBackupCodes')} />
        : <PageForm ctx={ctx} action={`${SECURITY_PATH}/totp`}><Submit label={t('security.factors.enrol')} /></PageForm>}
    </section>
  );
}

/** The passkeys: rename and remove without script; adding one runs the WebAuthn ceremony in the passkeys script. */
function PasskeysSection({ ctx, passkeys, offered }: { ctx: PageContext; passkeys: Passkey[]; offered: boolean }) {
  const { t } = ctx;
  if (!offered && passkeys.length === 0) return null;
  return (
    <section aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">{t('security.passkeys.heading')}</h2>
      {passkeys.length === 0 ? <p>{t('security.passkeys.none')}</p> : (
        <ul class="items">
          {passkeys.map((key) => (
            <li key={key.id}>
              <p><strong>{key.name}</strong></p>
              <p class="meta">{key.lastUsedAt ? t('security.passkeys.used', { date: formatDate(ctx.locale, key.lastUsedAt) }) : t('security.passkeys.neverUsed')}</p>
              <PageForm ctx={ctx} action={`${SECURITY_PATH}/passkeys/${key.id}/rename`}>
                <Field id={`passkey-${key.id}`} name="name" label={t('security.passkeys.newName', { name: key.name })} value={key.name} />
                <button type="submit" class="secondary">{t('security.passkeys.rename')}</button>
              </PageForm>
              <ActionForm ctx={ctx} action={`${SECURITY_PATH}/passkeys/${key.id}/remove`} label={t('security.passkeys.remove', { name: key.name })} />
            </li>
          ))}
        </ul>
      )}
      {offered && (
        <>
          <form data-passkey="register" data-back={`${SECURITY_PATH}${ctx.carried}`} data-failed={t('security.passkeys.failed')} hidden>
            <p class="alert" role="alert" hidden data-passkey-error="" />
            <Field id="passkey-name" name="name" label={t('security.passkeys.addName')} required={false} />
            <Submit label={t('security.passkeys.add')} />
          </form>
          <p class="notice" data-passkey-fallback="">{t('security.passkeys.needsScript')}</p>
        </>
      )}
    </section>
  );
}

function SessionsSection({ ctx, sessions, currentId }: { ctx: PageContext; sessions: Session[] | null; currentId: string }) {
  const { t } = ctx;
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">{t('security.sessions.heading')}</h2>
      {sessions === null ? <p>{t('security.sessions.afterEnrolment')}</p> : (
        <ul class="items">
          {sessions.map((session) => {
            const device = deviceOf(t, session.userAgent);
            const current = session.id === currentId;
            return (
              <li key={session.id} data-session={session.id}>
                <p><strong>{device}</strong>{current && <> · <strong>{t('security.sessions.thisDevice')}</strong></>}</p>
                <p class="meta">{t('security.sessions.details', { ip: session.ipAddress ?? '-', date: formatDate(ctx.locale, session.lastActiveAt) })}</p>
                {!current && <ActionForm ctx={ctx} action={`${SECURITY_PATH}/sessions/${session.id}/revoke`} label={t('security.sessions.revoke', { device })} />}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}

/** The security tab: password, second factors, passkeys, sessions; a refusal's alert, and the password check when a step asked for it. */
export function SecurityPage({ ctx, overview, features, currentSessionId, notice, error, reauthenticate = false }: {
  ctx: PageContext; overview: SecurityOverview; features: SecurityFeatures; currentSessionId: string; notice?: string; error?: string; reauthenticate?: boolean;
}) {
  return (
    <AccountLayout ctx={ctx} current={SECURITY_PATH} title={ctx.t('account.tab.security')} script={features.passkeys}>
      <Notice message={notice} />
      <Alert message={error} />
      {reauthenticate && <ReauthenticateSection ctx={ctx} />}
      <PasswordSection ctx={ctx} hasPassword={overview.hasPassword} />
      <FactorsSection ctx={ctx} mfa={overview.mfa} offered={features.totp} />
      <PasskeysSection ctx={ctx} passkeys={overview.passkeys} offered={features.passkeys} />
      <SessionsSection ctx={ctx} sessions={overview.sessions} currentId={currentSessionId} />
    </AccountLayout>
  );
}

/**
 * Enrolling an authenticator app: the QR code and the key as text (shown this once), then the first code.
 * After a wrong code the key is not shown again (it is sealed at rest); starting again makes a new one.
 */
export function TotpEnrolmentPage({ ctx, factorId, enrolment, error }: { ctx: PageContext; factorId: string; enrolment?: { secret: string; otpauthUri: string }; error?: string }) {
  const { t } = ctx;
  return (
    <AccountLayout ctx={ctx} current={SECURITY_PATH} title={t('security.totp.title')}>
      <Alert message={error} />
      {enrolment && (
        <>
          <p>{t('security.totp.scan')}</p>
          <QrCode text={enrolment.otpauthUri} label={t('security.totp.qrLabel')} />
          <dl>
            <dt>{t('security.totp.secret')}</dt>
            <dd><code class="secret" data-totp-secret="">{enrolment.secret}</code></dd>
            <dt>{t('security.totp.uri')}</dt>
            <dd><code class="secret">{enrolment.otpauthUri}</code></dd>
          </dl>
        </>
      )}
      <p>{t('security.totp.confirmIntro')}</p>
      <PageForm ctx={ctx} action={`${SECURITY_PATH}/totp/confirm`}>
        <input type="hidden" name="factorId" value={factorId} />
        <Field id="code" label={t('field.code')} autocomplete="one-time-code" inputMode="numeric" />
        <Submit label={t('security.totp.confirm')} />
      </PageForm>
      <ActionForm ctx={ctx} action={`${SECURITY_PATH}/totp`} label={t('security.totp.startOver')} />
    </AccountLayout>
  );
}

/** Backup codes, shown once: after enrolment and after new ones were made. */
export function BackupCodesPage({ ctx, codes }: { ctx: PageContext; codes: string[] }) {
  const { t } = ctx;
  return (
    <AccountLayout ctx={ctx} current={SECURITY_PATH} title={t('security.backupCodes.title')}>
      <p>{t('security.backupCodes.intro')}</p>
      <ul class="codes" data-backup-codes="">{codes.map((code) => <li key={code}><code>{code}</code></li>)}</ul>
      <nav class="links"><a href={`${SECURITY_PATH}${ctx.carried}`}>{t('security.backupCodes.done')}</a></nav>
    </AccountLayout>
  );
}

/** The passkey button of /sign-in: hidden until the passkeys script finds a browser that can use one. */
export function PasskeySignIn({ ctx }: { ctx: PageContext }) {
  const { t } = ctx;
  return (
    <form method="post" action={`/sign-in/passkey${ctx.carried}`} data-passkey="sign-in" data-failed={t('security.passkeySignIn.failed')} hidden>
      <input type="hidden" name="csrf" value={ctx.csrfToken} />
      <p class="alert" role="alert" hidden data-passkey-error="" />
      <button type="submit" class="secondary">{t('security.passkeySignIn.button')}</button>
    </form>
  );
}
