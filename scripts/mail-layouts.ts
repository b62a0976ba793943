// `npm run mail-layouts`: compiles the mail layout (src/platform/mail/layout.tsx) with mjml into
// src/platform/mail/layouts/*.html, which the app fills at run time; commit the result.
import { writeFileSync } from 'node:fs';
import { compiledLayouts } from './compile-mail-layouts.js';

for (const [name, html] of Object.entries(await compiledLayouts())) {
  writeFileSync(new URL(`../src/platform/mail/layouts/${name}.html`, import.meta.url), html);
}
process.stderr.write('Wrote src/platform/mail/layouts/\n');
