import type { Locale } from '../platform/i18n/catalogue.js';
import type { Mail } from '../platform/mail/mailer.js';
import { composeMail, mailTime, type MailBrand } from '../platform/mail/render.js';

/** The accept link: invitationAcceptUrl with the token in `invitation_token`, as environment invitations do. */
export function acceptLink(invitationAcceptUrl: string, token: string): string {
  const url = new URL(invitationAcceptUrl);
  url.searchParams.set('invitation_token', token);
  return url.toString();
}

/** The invitation in the invitee's language when they have an account, else the inviter's; branded like the environment's pages. */
export function organizationInvitationMail(to: string, brand: MailBrand, locale: Locale, organizationName: string, role: string, link: string, expiresAt: Date): Mail {
  return composeMail({
    to, kind: 'organizationInvitation', locale, brand, values: { organization: organizationName, role, expires: mailTime(expiresAt, locale) },
    action: { label: 'mail.organizationInvitation.action', href: link },
  });
}
