/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';

/**
 * The MJML source of every mail's HTML part, written as JSX. It is compiled by mjml at development time
 * (`npm run mail-layouts`, checked by test/mail/layouts-current.test.ts), not at run time: mjml takes about
 * a second and 60 MB to load and milliseconds per mail. The compiled layouts in ./layouts/ hold `{{slot}}`
 * tokens and the colour COLOR_SLOT, which render.ts fills with each mail's escaped values.
 */

/** MJML's attributes are plain strings, in MJML's own spelling (`background-color`). */
type MjProps = { [attribute: string]: string | ComponentChildren; children?: ComponentChildren };
declare module 'preact' {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace JSX {
    interface IntrinsicElements {
      mjml: MjProps; 'mj-head': MjProps; 'mj-title': MjProps; 'mj-preview': MjProps; 'mj-attributes': MjProps; 'mj-all': MjProps;
      'mj-body': MjProps; 'mj-section': MjProps; 'mj-column': MjProps; 'mj-text': MjProps; 'mj-image': MjProps; 'mj-button': MjProps;
    }
  }
}

/** What a mail shows between its greeting paragraph and its closing one: nothing more, a code, or a button. */
export type LayoutShape = 'notice' | 'code' | 'action';
export interface LayoutVariant { shape: LayoutShape; logo: boolean }
export const LAYOUT_VARIANTS: LayoutVariant[] = (['notice', 'code', 'action'] as const).flatMap((shape) => [{ shape, logo: false }, { shape, logo: true }]);
export const layoutName = ({ shape, logo }: LayoutVariant) => `${shape}${logo ? '-logo' : ''}`;

export const SLOTS = ['lang', 'subject', 'product', 'logoUrl', 'intro', 'code', 'actionLabel', 'href', 'linkFallback', 'outro', 'footer'] as const;
export type Slot = (typeof SLOTS)[number];
const slot = (name: Slot) => `{{${name}}}`;
/** mjml accepts only colours where a colour goes: the brand's colour takes the place of this one. */
export const COLOR_SLOT = '#0a0b0c';

const MUTED = '#4b5563';

export function MailLayout({ shape, logo }: LayoutVariant) {
  return (
    <mjml lang={slot('lang')}>
      <mj-head>
        <mj-title>{slot('subject')}</mj-title>
        <mj-preview>{slot('subject')}</mj-preview>
        <mj-attributes>
          <mj-all font-family="-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" />
          <mj-text font-size="16px" line-height="24px" color="#111827" />
        </mj-attributes>
      </mj-head>
      <mj-body background-color="#f3f4f6">
        <mj-section padding="24px 0 8px">
          <mj-column>
            {logo
              ? <mj-image src={slot('logoUrl')} alt={slot('product')} width="160px" align="center" />
              : <mj-text align="center" font-size="20px" font-weight="700">{slot('product')}</mj-text>}
          </mj-column>
        </mj-section>
        <mj-section background-color="#ffffff" border-radius="8px" padding="16px 8px">
          <mj-column>
            <mj-text>{slot('intro')}</mj-text>
            {shape === 'code'
              && <mj-text align="center" font-size="32px" line-height="40px" letter-spacing="6px" font-weight="700" font-family="Menlo, Consolas, monospace">{slot('code')}</mj-text>}
            {shape === 'action' && <mj-button href={slot('href')} background-color={COLOR_SLOT} color="#ffffff" font-size="16px" font-weight="600" border-radius="6px">{slot('actionLabel')}</mj-button>}
            {shape === 'action' && <mj-text font-size="14px" color={MUTED}>{slot('linkFallback')}<br /><a href={slot('href')} style={`color:${COLOR_SLOT};word-break:break-all`}>{slot('href')}</a></mj-text>}
            <mj-text font-size="14px" color={MUTED}>{slot('outro')}</mj-text>
          </mj-column>
        </mj-section>
        <mj-section padding="8px 0 24px">
          <mj-column>
            <mj-text align="center" font-size="12px" color={MUTED}>{slot('footer')}</mj-text>
          </mj-column>
        </mj-section>
      </mj-body>
    </mjml>
  );
}
