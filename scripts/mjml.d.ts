// mjml 5 ships no types; this is the part scripts/compile-mail-layouts.tsx uses.
declare module 'mjml' {
  export default function mjml2html(input: string, options?: { validationLevel?: 'strict' | 'soft' | 'skip' }): Promise<{ html: string; errors: unknown[] }>;
}
