import { describe, expect, it } from 'vitest';
import { pickLocale } from '../../src/platform/i18n/locale.js';
import { CATALOGUES, LOCALES, translator } from '../../src/platform/i18n/catalogue.js';

describe('the message catalogue', () => {
  it('has every key in every language, none empty, with the same placeholders', () => {
    const keys = Object.keys(CATALOGUES.en).sort();
    const placeholders = (text: string) => (text.match(/\{\w+\}/g) ?? []).sort();
    for (const locale of LOCALES) {
      expect(Object.keys(CATALOGUES[locale]).sort(), locale).toEqual(keys);
      for (const key of keys) {
        const text = CATALOGUES[locale][key as keyof typeof CATALOGUES.en];
        expect(text.trim(), `${locale} ${key}`).not.toBe('');
        expect(placeholders(text), `${locale} ${key}`).toEqual(placeholders(CATALOGUES.en[key as keyof typeof CATALOGUES.en]));
      }
    }
  });

  it('uses the contract\'s English labels', () => {
    const t = translator('en');
    expect(['field.email', 'field.password', 'field.code', 'field.newPassword', 'field.name', 'button.signIn', 'button.signUp'].map((k) => t(k as never)))
      .toEqual(['Email', 'Password', 'Code', 'New password', 'Name', 'Sign in', 'Sign up']);
  });

  it('fills in values', () => {
    expect(translator('da')('signIn.title', { product: 'Acme' })).toBe('Log ind på Acme');
  });
});

describe('pickLocale', () => {
  it('takes ?locale=, then the user\'s locale, then Accept-Language by quality, then English', () => {
    expect(pickLocale({ query: 'da', user: 'en', acceptLanguage: 'en' })).toBe('da');
    expect(pickLocale({ query: 'fr', user: 'da', acceptLanguage: 'en' })).toBe('da');
    expect(pickLocale({ user: null, acceptLanguage: 'en;q=0.4, da-DK;q=0.9' })).toBe('da');
    expect(pickLocale({ acceptLanguage: 'da;q=0, en' })).toBe('en');
    expect(pickLocale({ acceptLanguage: 'fr, de' })).toBe('en');
    expect(pickLocale({})).toBe('en');
  });
});
