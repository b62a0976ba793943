/** What the mail part says. Keys are prefixed with 'mail.'; da is typed by en's keys. */
export const en = {
  'mail.placeholder': '-',
};

export const da: Record<keyof typeof en, string> = {
  'mail.placeholder': '-',
};
