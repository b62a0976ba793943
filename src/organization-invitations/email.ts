import { escapeHtml, type Mail } from '../platform/mail/mailer.js';

/** The accept link: invitationAcceptUrl with the token in `invitation_token`, as environment invitations do. */
export function acceptLink(invitationAcceptUrl: string, token: string): string {
  const url = new URL(invitationAcceptUrl);
  url.searchParams.set('invitation_token', token);
  return url.toString();
}

export function organizationInvitationMail(to: string, organizationName: string, role: string, link: string, expiresAt: Date): Mail {
  const expires = expiresAt.toUTCString();
  return {
    to,
    subject: `You're invited to join ${organizationName}`,
    text: `You have been invited to join ${organizationName} as ${role}.\n\nAccept the invitation here:\n${link}\n\n`
      + `The invitation expires on ${expires}. If you were not expecting it, ignore this email.`,
    html: `<p>You have been invited to join <strong>${escapeHtml(organizationName)}</strong> as ${escapeHtml(role)}.</p>`
      + `<p><a href="${escapeHtml(link)}">Accept the invitation</a></p>`
      + `<p>The invitation expires on ${escapeHtml(expires)}. If you were not expecting it, ignore this email.</p>`,
  };
}
