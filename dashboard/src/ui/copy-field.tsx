import { useId } from 'react';
import { useClipboard } from './clipboard.js';

/**
 * A value an operator hands to someone else (a DNS record, a URL for an identity provider): read-only in a
 * labelled field that selects itself on focus, and a Copy button named after it, which says whether it copied.
 */
export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const id = useId();
  const { copy, message: copied } = useClipboard(value, 'value');
  return (
    <div className="copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="setting-input">
        <input id={id} readOnly value={value} className="secret-value" onFocus={(event) => event.target.select()}
          aria-describedby={hint ? `${id}-hint` : undefined} />
        <button type="button" onClick={copy} aria-label={`Copy ${label}`}>Copy</button>
      </div>
      {hint && <span id={`${id}-hint`} className="hint">{hint}</span>}
      <p role="status" className="row-status">{copied}</p>
    </div>
  );
}
