import { useState } from 'react';

/** Copies `value` on demand; the message says whether it worked (for a role="status" line). `noun` names the value in the fallback advice. */
export function useClipboard(value: string, noun: string) {
  const [message, setMessage] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setMessage('Copied to the clipboard.');
    } catch {
      setMessage(`The browser refused to copy: select the ${noun} and copy it yourself.`);
    }
  };
  return { copy: () => void copy(), message };
}
