import { useId } from 'react';
import { useClipboard } from './clipboard.js';

/**
 * A secret shown this once (a new secret key, a webhook signing secret): read-only in a labelled field, a
 * copy button, and the warning that it cannot be shown again (`warning` says what it is for). Dismissing it forgets it.
 */
export function SecretOnce({ label, secret, onDone, warning }: { label: string; secret: string; onDone: () => void; warning?: string }) {
  const id = useId();
  const { copy, message: copied } = useClipboard(secret, 'key');
  return (
    <div className="secret-once" role="region" aria-label={label}>
      <p className="secret-warning"><strong>Copy this {warning ? 'secret' : 'key'} now.</strong> {warning ?? 'It is shown only this once; Gatehouse keeps only its hash. Keep it on your backend, never in a browser.'}</p>
      <label htmlFor={id}>{label}</label>
      <div className="setting-input">
        <input id={id} readOnly value={secret} className="secret-value" onFocus={(event) => event.target.select()} />
        <button type="button" onClick={copy}>Copy</button>
      </div>
      <p role="status">{copied}</p>
      <button type="button" onClick={onDone}>I have copied it</button>
    </div>
  );
}

/** A date and time the way the operator's browser writes them, or a dash. */
export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
