import type { Locale } from '../platform/i18n/catalogue.js';
import type { Mail } from '../platform/mail/mailer.js';
import { composeMail, mailTime, type MailBrand } from '../platform/mail/render.js';

/** The sign-up link: signUpUrl with the token (and the redirect URL, when one was given) in its query. */
export function invitationLink(signUpUrl: string, token: string, redirectUrl: string | null): string {
  const url = new URL(signUpUrl);
  url.searchParams.set('invitation_token', token);
  if (redirectUrl) url.searchParams.set('redirect_url', redirectUrl);
  return url.toString();
}

/** The invitation in the inviter's language (the invitee is no user yet), branded like the environment's pages. */
export function invitationMail(to: string, brand: MailBrand, locale: Locale, link: string, expiresAt: Date): Mail {
  return composeMail({
    to, kind: 'invitation', locale, brand, values: { expires: mailTime(expiresAt, locale) },
    action: { label: 'mail.invitation.action', href: link },
  });
}
