import * as account from './messages/account.js';
import * as mail from './messages/mail.js';
import * as pages from './messages/pages.js';
import * as security from './messages/security.js';

/**
 * The one catalogue of what Gatehouse says to people (the hosted pages and every mail), in the spec's
 * locales, put together from one module per area. Each area's `da` is typed by its `en`, so a key missing in
 * either language fails the type check (and test/hosted-pages/messages.test.ts at run time).
 * `{name}` marks a value filled in when the message is used.
 */
const en = { ...pages.en, ...account.en, ...security.en, ...mail.en };

export type MessageKey = keyof typeof en;
export type Catalogue = Record<MessageKey, string>;

const da: Catalogue = { ...pages.da, ...account.da, ...security.da, ...mail.da };

export const LOCALES = ['en', 'da'] as const;
export type Locale = (typeof LOCALES)[number];
export const CATALOGUES: Record<Locale, Catalogue> = { en, da };

export const isLocale = (value: string | null | undefined): value is Locale => (LOCALES as readonly string[]).includes(value ?? '');

export type Translate = (key: MessageKey, values?: Record<string, string>) => string;

export const translator = (locale: Locale): Translate => (key, values = {}) =>
  CATALOGUES[locale][key].replace(/\{(\w+)\}/g, (whole, name: string) => values[name] ?? whole);

/** The message of a problem a page shows beside its form: its code's own, or a general one. */
export function problemMessageKey(code: string): MessageKey {
  const key = `error.${code}`;
  return key in en ? (key as MessageKey) : 'error.generic';
}
