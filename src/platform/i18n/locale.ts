import { isLocale, type Locale } from './catalogue.js';

/** The locales an Accept-Language header names, most wanted first, by their primary subtag ("da-DK" is "da"). */
function acceptedLocales(header: string): Locale[] {
  return header.split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
      return { language: tag.trim().toLowerCase().split('-')[0], q: Number.isFinite(q) ? q : 0, index };
    })
    .filter((entry) => entry.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
    .map((entry) => entry.language)
    .filter(isLocale);
}

/** A page's language: `?locale=`, then the signed-in user's `locale`, then Accept-Language, then English. */
export function pickLocale(choice: { query?: string; user?: string | null; acceptLanguage?: string }): Locale {
  if (isLocale(choice.query)) return choice.query;
  if (isLocale(choice.user)) return choice.user;
  return acceptedLocales(choice.acceptLanguage ?? '')[0] ?? 'en';
}
