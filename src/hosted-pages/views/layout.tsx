/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import type { Locale, Translate } from '../../platform/i18n/catalogue.js';

/** What every page needs to know about its request: the language, the branding and the form's CSRF token. */
export interface PageContext {
  locale: Locale;
  t: Translate;
  productName: string;
  logoUrl: string | null;
  /** Whether the environment sets a brand colour (served as /hosted-assets/theme.css). */
  themed: boolean;
  csrfToken: string;
  /** `?redirect_url=…&locale=…` as the request had them (or empty): links and forms carry them to the next step. */
  carried: string;
  /** On an impersonated session, the operator's name (or email): every page says so. */
  impersonator: string | null;
  /** The environment's terms (setting hostedPages.termsUrl): sign-up asks for consent to them. */
  termsUrl: string | null;
}

export const STYLES_PATH = '/hosted-assets/pages.css';
export const THEME_PATH = '/hosted-assets/theme.css';
/** The pages' one script (passkeys need WebAuthn, i.e. JavaScript), on the pages whose route opts in to `script-src 'self'`. */
export const PASSKEYS_SCRIPT_PATH = '/hosted-assets/passkeys.js';

/** The document around every page: one stylesheet and the environment's theme, both served by Gatehouse; the passkeys script where a page offers passkeys. */
export function Layout({ ctx, title, children, wide = false, script = false }: { ctx: PageContext; title: string; children: ComponentChildren; wide?: boolean; script?: boolean }) {
  return (
    <html lang={ctx.locale}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="same-origin" />
        <title>{title.includes(ctx.productName) ? title : `${title} · ${ctx.productName}`}</title>
        <link rel="stylesheet" href={STYLES_PATH} />
        {ctx.themed && <link rel="stylesheet" href={THEME_PATH} />}
        {script && <script src={PASSKEYS_SCRIPT_PATH} defer />}
      </head>
      <body>
        {ctx.impersonator && <p class="impersonation" role="status">{ctx.t('impersonation.banner', { operator: ctx.impersonator })}</p>}
        <main class={wide ? 'card wide' : 'card'}>
          <header class="brand">
            {ctx.logoUrl ? <img src={ctx.logoUrl} alt={ctx.productName} class="logo" /> : <p class="product">{ctx.productName}</p>}
          </header>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** A problem shown beside a form, announced by screen readers as it appears. */
export const Alert = ({ message }: { message?: string }) => (message ? <p class="alert" role="alert">{message}</p> : null);

export const Notice = ({ message }: { message?: string }) => (message ? <p class="notice" role="status">{message}</p> : null);

/** A labelled input: the label is visible and tied to the field, so people, screen readers and tests find it. */
export function Field({ id, name = id, label, type = 'text', value, autocomplete, required = true, inputMode }: {
  id: string; name?: string; label: string; type?: 'text' | 'email' | 'password'; value?: string; autocomplete?: string; required?: boolean; inputMode?: 'numeric';
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {type === 'password' ? <input id={id} name={name} type="password" autocomplete={autocomplete} required={required} />
        : type === 'email' ? <input id={id} name={name} type="email" value={value} autocomplete={autocomplete} required={required} />
          : <input id={id} name={name} type="text" value={value} autocomplete={autocomplete} required={required} inputMode={inputMode} />}
    </div>
  );
}

/** A form posting back to a page with the CSRF token and the carried query. */
export function PageForm({ ctx, action, children }: { ctx: PageContext; action: string; children: ComponentChildren }) {
  return (
    <form method="post" action={`${action}${ctx.carried}`}>
      <input type="hidden" name="csrf" value={ctx.csrfToken} />
      {children}
    </form>
  );
}

export const Submit = ({ label }: { label: string }) => <button type="submit">{label}</button>;
