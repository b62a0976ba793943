/** What the account pages say. Keys are prefixed with 'account.'; da is typed by en's keys. */
export const en = {
  'account.tabs': 'Account',
  'account.tab.profile': 'Profile',
  'account.tab.security': 'Security',
  'account.tab.data': 'Your data',
};

export const da: Record<keyof typeof en, string> = {
  'account.tabs': 'Konto',
  'account.tab.profile': 'Profil',
  'account.tab.security': 'Sikkerhed',
  'account.tab.data': 'Dine data',
};
