/** @jsxImportSource preact */
import mjml2html from 'mjml';
import { renderToStaticMarkup } from 'preact-render-to-string';
import { LAYOUT_VARIANTS, layoutName, MailLayout } from '../src/platform/mail/layout.js';

/** Every variant of the mail layout, compiled by mjml (strict: an invalid attribute fails), by file name. */
export async function compiledLayouts(): Promise<Record<string, string>> {
  const compiled: Record<string, string> = {};
  for (const variant of LAYOUT_VARIANTS) {
    const { html } = await mjml2html(renderToStaticMarkup(<MailLayout {...variant} />), { validationLevel: 'strict' });
    compiled[layoutName(variant)] = html;
  }
  return compiled;
}
