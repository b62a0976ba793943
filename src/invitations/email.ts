import { escapeHtml, type Mail } from '../platform/mail/mailer.js';

/** The sign-up link: signUpUrl with the token (and the redirect URL, when one was given) in its query. */
export function invitationLink(signUpUrl: string, token: string, redirectUrl: string | null): string {
  const url = new URL(signUpUrl);
  url.searchParams.set('invitation_token', token);
  if (redirectUrl) url.searchParams.set('redirect_url', redirectUrl);
  return url.toString();
}

export function invitationMail(to: string, environmentName: string, link: string, expiresAt: Date): Mail {
  const expires = expiresAt.toUTCString();
  return {
    to,
    subject: `You're invited to join ${environmentName}`,
    text: `You have been invited to join ${environmentName}.\n\nCreate your account here:\n${link}\n\n`
      + `The invitation expires on ${expires}. If you were not expecting it, ignore this email.`,
    html: `<p>You have been invited to join <strong>${escapeHtml(environmentName)}</strong>.</p>`
      + `<p><a href="${escapeHtml(link)}">Create your account</a></p>`
      + `<p>The invitation expires on ${escapeHtml(expires)}. If you were not expecting it, ignore this email.</p>`,
  };
}
