const WORDS = { PENDING: 'Pending', ACCEPTED: 'Accepted', REVOKED: 'Revoked', EXPIRED: 'Expired' } as const;

/** An invitation's status in words (never by colour alone). */
export function InvitationStatusBadge({ status }: { status: keyof typeof WORDS }) {
  return <span className={`badge badge-invitation-${status.toLowerCase()}`}>{WORDS[status]}</span>;
}
