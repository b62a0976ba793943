/** A user's status in words (never by colour alone). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${status}`}>{status[0].toUpperCase() + status.slice(1)}</span>;
}
