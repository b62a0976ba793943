/** @jsxImportSource preact */
import { PasskeySignIn } from '../security/views.js';
import { Alert, Field, Layout, Notice, PageForm, Submit, type PageContext } from './layout.js';

interface FormState { ctx: PageContext; error?: string }

export interface ProviderLink { name: string; href: string }

/** `passkeys`: the passkey button, shown by the passkeys script where the browser can use one. */
/** `sso`: where the email's organization signs its users in (its IdP), offered first when the password was refused for it. */
export function SignInPage({ ctx, error, email, providers, passkeys = false, sso }: FormState & { email?: string; providers: ProviderLink[]; passkeys?: boolean; sso?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('signIn.title', { product: ctx.productName })} script={passkeys}>
      <Alert message={error} />
      {sso && <p><a class="button" href={sso}>{t('signIn.withOrganization')}</a></p>}
      <PageForm ctx={ctx} action="/sign-in">
        <Field id="email" label={t('field.email')} type="email" value={email} autocomplete="username" />
        <Field id="password" label={t('field.password')} type="password" autocomplete="current-password" />
        <Submit label={t('button.signIn')} />
      </PageForm>
      {passkeys && <PasskeySignIn ctx={ctx} />}
      {providers.length > 0 && (
        <ul class="providers">
          {providers.map((p) => <li key={p.href}><a class="button secondary" href={p.href}>{t('signIn.withProvider', { provider: p.name })}</a></li>)}
        </ul>
      )}
      <nav class="links">
        <a href={`/forgot-password${ctx.carried}`}>{t('signIn.forgotPassword')}</a>
        <a href={`/sign-up${ctx.carried}`}>{t('signIn.noAccount')}</a>
      </nav>
    </Layout>
  );
}

/** The second step of a sign-in (or of a reset) by a user with a factor: the challenge rides along in the form. */
export function SecondFactorPage({ ctx, error, challengeToken, action = '/sign-in', invitationToken }: FormState & { challengeToken: string; action?: string; invitationToken?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('secondFactor.title')}>
      <p>{t('secondFactor.intro')}</p>
      <Alert message={error} />
      <PageForm ctx={ctx} action={action}>
        {invitationToken && <input type="hidden" name="token" value={invitationToken} />}
        <input type="hidden" name="challengeToken" value={challengeToken} />
        <Field id="code" label={t('field.code')} autocomplete="one-time-code" />
        <Submit label={t('button.verify')} />
      </PageForm>
    </Layout>
  );
}

/** The required consent checkbox; the label links the environment's terms when it names them (setting hostedPages.termsUrl). */
function LegalConsent({ ctx }: { ctx: PageContext }) {
  const label = ctx.t('field.legalConsent');
  return (
    <div class="field checkbox">
      <input id="legalConsentAccepted" name="legalConsentAccepted" type="checkbox" value="true" required />
      <label for="legalConsentAccepted">{ctx.termsUrl ? <a href={ctx.termsUrl} target="_blank" rel="noopener noreferrer">{label}</a> : label}</label>
    </div>
  );
}

export function SignUpPage({ ctx, error, email, name, askName }: FormState & { email?: string; name?: string; askName: boolean }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('signUp.title', { product: ctx.productName })}>
      <Alert message={error} />
      <PageForm ctx={ctx} action="/sign-up">
        {askName && <Field id="name" label={t('field.name')} value={name} autocomplete="name" />}
        <Field id="email" label={t('field.email')} type="email" value={email} autocomplete="email" />
        <Field id="password" label={t('field.password')} type="password" autocomplete="new-password" />
        {ctx.termsUrl && <LegalConsent ctx={ctx} />}
        <Submit label={t('button.signUp')} />
      </PageForm>
      <nav class="links"><a href={`/sign-in${ctx.carried}`}>{t('signUp.haveAccount')}</a></nav>
    </Layout>
  );
}

export function VerifyEmailPage({ ctx, error, notice, email }: FormState & { notice?: string; email?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('verifyEmail.title')}>
      {email && <p>{t('verifyEmail.intro', { email })}</p>}
      <Alert message={error} />
      <Notice message={notice} />
      <PageForm ctx={ctx} action="/verify-email">
        <Field id="email" label={t('field.email')} type="email" value={email} autocomplete="email" />
        <Field id="code" label={t('field.code')} autocomplete="one-time-code" inputMode="numeric" />
        <Submit label={t('button.verify')} />
      </PageForm>
      {email && (
        <PageForm ctx={ctx} action="/verify-email/resend">
          <input type="hidden" name="email" value={email} />
          <button type="submit" class="secondary">{t('button.resendCode')}</button>
        </PageForm>
      )}
    </Layout>
  );
}

export function ForgotPasswordPage({ ctx, error, email }: FormState & { email?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('forgotPassword.title')}>
      <p>{t('forgotPassword.intro')}</p>
      <Alert message={error} />
      <PageForm ctx={ctx} action="/forgot-password">
        <Field id="email" label={t('field.email')} type="email" value={email} autocomplete="email" />
        <Submit label={t('button.sendCode')} />
      </PageForm>
      <nav class="links"><a href={`/sign-in${ctx.carried}`}>{t('error.back')}</a></nav>
    </Layout>
  );
}

export function ResetPasswordPage({ ctx, error, email }: FormState & { email?: string }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('resetPassword.title')}>
      {email && <p>{t('resetPassword.intro', { email })}</p>}
      <Alert message={error} />
      <PageForm ctx={ctx} action="/reset-password">
        <Field id="email" label={t('field.email')} type="email" value={email} autocomplete="username" />
        <Field id="code" label={t('field.code')} autocomplete="one-time-code" inputMode="numeric" />
        <Field id="newPassword" label={t('field.newPassword')} type="password" autocomplete="new-password" />
        <Submit label={t('button.resetPassword')} />
      </PageForm>
    </Layout>
  );
}

export function AcceptInvitationPage({ ctx, error, email, token, name, askName }: FormState & { email: string; token: string; name?: string; askName: boolean }) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('acceptInvitation.title', { product: ctx.productName })}>
      <p>{t('acceptInvitation.intro', { email })}</p>
      <Alert message={error} />
      <PageForm ctx={ctx} action="/accept-invitation">
        <input type="hidden" name="token" value={token} />
        {askName && <Field id="name" label={t('field.name')} value={name} autocomplete="name" />}
        <Field id="password" label={t('field.password')} type="password" autocomplete="new-password" />
        <LegalConsent ctx={ctx} />
        <Submit label={t('button.signUp')} />
      </PageForm>
    </Layout>
  );
}

/** Join an organization: with the signed-in account, or by signing up (the invited email) or in. */
export function AcceptOrganizationInvitationPage({ ctx, error, email, token, signedIn, askName }: FormState & { email: string; token: string; signedIn: boolean; askName: boolean }) {
  const { t } = ctx;
  const action = '/accept-organization-invitation';
  return (
    <Layout ctx={ctx} title={t('orgInvitation.title', { product: ctx.productName })}>
      <p>{t('orgInvitation.intro', { email })}</p>
      <Alert message={error} />
      {signedIn ? (
        <PageForm ctx={ctx} action={action}>
          <p>{t('orgInvitation.signedIn')}</p>
          <input type="hidden" name="token" value={token} />
          <input type="hidden" name="intent" value="join" />
          <Submit label={t('button.join')} />
        </PageForm>
      ) : (
        <>
          <section aria-labelledby="new-account">
            <h2 id="new-account">{t('orgInvitation.newAccount')}</h2>
            <PageForm ctx={ctx} action={action}>
              <input type="hidden" name="token" value={token} />
              <input type="hidden" name="intent" value="sign_up" />
              {askName && <Field id="name" label={t('field.name')} autocomplete="name" />}
              <Field id="password" label={t('field.password')} type="password" autocomplete="new-password" />
              <LegalConsent ctx={ctx} />
              <Submit label={t('button.signUp')} />
            </PageForm>
          </section>
          <section aria-labelledby="existing-account">
            <h2 id="existing-account">{t('orgInvitation.existingAccount')}</h2>
            <PageForm ctx={ctx} action={action}>
              <input type="hidden" name="token" value={token} />
              <input type="hidden" name="intent" value="sign_in" />
              <Field id="email" name="email" label={t('field.email')} type="email" value={email} autocomplete="username" />
              <Field id="current-password" name="password" label={t('field.password')} type="password" autocomplete="current-password" />
              <Submit label={t('button.signIn')} />
            </PageForm>
          </section>
        </>
      )}
    </Layout>
  );
}

export function SignOutPage({ ctx }: FormState) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('signOut.title', { product: ctx.productName })}>
      <PageForm ctx={ctx} action="/sign-out">
        <Submit label={t('button.signOut')} />
      </PageForm>
    </Layout>
  );
}

export function SignedInPage({ ctx }: FormState) {
  return <Layout ctx={ctx} title={ctx.t('signedIn.title')}><p>{ctx.t('signedIn.intro')}</p></Layout>;
}

export function ErrorPage({ ctx, error }: FormState) {
  const { t } = ctx;
  return (
    <Layout ctx={ctx} title={t('error.title')}>
      <Alert message={error} />
      <nav class="links"><a href={`/sign-in${ctx.carried}`}>{t('error.back')}</a></nav>
    </Layout>
  );
}
