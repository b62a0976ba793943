import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compiledLayouts } from '../../scripts/compile-mail-layouts.js';

describe('the compiled mail layouts', () => {
  it('are what mjml makes of src/platform/mail/layout.tsx now (else run npm run mail-layouts)', async () => {
    const compiled = await compiledLayouts();
    expect(Object.keys(compiled).sort()).toEqual(['action', 'action-logo', 'code', 'code-logo', 'notice', 'notice-logo']);
    for (const [name, html] of Object.entries(compiled)) {
      expect(readFileSync(new URL(`../../src/platform/mail/layouts/${name}.html`, import.meta.url), 'utf8'), name).toBe(html);
    }
  });
});
