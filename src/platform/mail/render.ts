import { readFileSync } from 'node:fs';
import { translator, type Locale, type MessageKey } from '../i18n/catalogue.js';
import { COLOR_SLOT, LAYOUT_VARIANTS, layoutName, type LayoutShape, type Slot } from './layout.js';
import { escapeHtml, type Mail } from './mailer.js';

/** How an environment's mail looks: its hosted pages' branding (contract §3e), the product name already resolved. */
export interface MailBrand { productName: string; logoUrl: string | null; primaryColor: string | null }

/** The pages' own blue (hosted-pages/assets/pages.css), for an environment without a primary colour. */
const DEFAULT_COLOR = '#1d4ed8';

// Read once: mjml compiled them at development time (layout.tsx); filling one costs well under a millisecond.
const LAYOUTS = new Map(LAYOUT_VARIANTS.map((variant) =>
  [layoutName(variant), readFileSync(new URL(`./layouts/${layoutName(variant)}.html`, import.meta.url), 'utf8')]));

/** The kinds of mail: each has `mail.{kind}.subject`, `.intro` and `.outro` in the catalogue. */
type KindsIn<K> = K extends `mail.${infer Kind}.subject` ? (`mail.${Kind}.intro` | `mail.${Kind}.outro` extends MessageKey ? Kind : never) : never;
export type MailKind = KindsIn<MessageKey>;

export interface MailRequest {
  to: string;
  kind: MailKind;
  locale: Locale;
  brand: MailBrand;
  /** Values for the messages' `{placeholders}`; `{product}` (the brand's name) and `{code}` are added. */
  values?: Record<string, string>;
  /** A code to show large (a `code` mail). */
  code?: string;
  /** A link to show as a button (an `action` mail), with its label. */
  action?: { label: MessageKey; href: string };
}

/**
 * A mail in the recipient's language: the subject and the text part from the catalogue, and the HTML part
 * from the compiled layout, every value in it escaped. It carries only what `values`, `code` and `action` give.
 */
export function composeMail({ to, kind, locale, brand, values = {}, code, action }: MailRequest): Mail {
  const t = translator(locale);
  const filled = { ...values, product: brand.productName, ...(code !== undefined && { code }) };
  const say = (key: MessageKey) => t(key, filled);
  const subject = say(`mail.${kind}.subject` as MessageKey);
  const intro = say(`mail.${kind}.intro` as MessageKey);
  const outro = say(`mail.${kind}.outro` as MessageKey);
  const footer = say('mail.footer');
  const actionLabel = action ? say(action.label) : '';
  const text = [intro, code, action && `${actionLabel}:\n${action.href}`, outro, `-- \n${footer}`]
    .filter((part) => part !== undefined && part !== '').join('\n\n');
  const shape: LayoutShape = code !== undefined ? 'code' : action ? 'action' : 'notice';
  const html = fill(LAYOUTS.get(layoutName({ shape, logo: brand.logoUrl !== null }))!, brand.primaryColor ?? DEFAULT_COLOR, {
    lang: locale, subject, product: brand.productName, logoUrl: brand.logoUrl ?? '', intro, code: code ?? '',
    actionLabel, href: action?.href ?? '', linkFallback: say('mail.linkFallback'), outro, footer,
  });
  return { to, subject, text, html };
}

/** Puts each value, escaped, in its slot, in one pass (a value that looks like a slot stays as it is). */
function fill(layout: string, color: string, slots: Record<Slot, string>): string {
  return layout.replace(/\{\{(\w+)\}\}|#0a0b0c/gi, (whole, name?: string) => {
    if (name === undefined) return whole.toLowerCase() === COLOR_SLOT ? escapeHtml(color) : whole;
    if (!(name in slots)) throw new Error(`the mail layout has an unknown slot ${whole}`);
    return escapeHtml(slots[name as Slot]);
  });
}

/** A moment as a mail states it, in the recipient's language, in UTC. */
export const mailTime = (at: Date, locale: Locale) =>
  `${new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(at)} UTC`;
