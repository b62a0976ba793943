import { useId, useState } from 'react';

/**
 * A value an operator hands to someone else (a DNS record, a URL for an identity provider): read-only in a
 * labelled field that selects itself on focus, and a Copy button named after it, which says whether it copied.
 */
export function CopyField({ label, value, hint }: { label: string; value: string; hint?: string }) {
  const id = useId();
  const [copied, setCopied] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused to copy: select the value and copy it yourself.');
    }
  };
  return (
    <div className="copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="setting-input">
        <input id={id} readOnly value={value} className="secret-value" onFocus={(event) => event.target.select()}
          aria-describedby={hint ? `${id}-hint` : undefined} />
        <button type="button" onClick={() => void copy()} aria-label={`Copy ${label}`}>Copy</button>
      </div>
      {hint && <span id={`${id}-hint`} className="hint">{hint}</span>}
      <p role="status" className="row-status">{copied}</p>
    </div>
  );
}
