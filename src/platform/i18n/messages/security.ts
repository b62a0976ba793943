/** What the security part says. Keys are prefixed with 'security.'; da is typed by en's keys. */
export const en = {
  'security.placeholder': '-',
};

export const da: Record<keyof typeof en, string> = {
  'security.placeholder': '-',
};
