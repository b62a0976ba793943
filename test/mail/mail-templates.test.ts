import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { translator, type Locale, type MessageKey } from '../../src/platform/i18n/catalogue.js';
import { composeMail, mailTime, type MailKind } from '../../src/platform/mail/render.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';

const BRAND = { productName: 'Acme <Apps> & Co', logoUrl: 'https://cdn.acme.example/logo.png?v=1&size=2', primaryColor: '#7b1fa2' };
const EXPIRES = new Date('2026-12-24T18:30:00Z');

/** Every kind of mail the code sends, with what it carries. */
const KINDS: { kind: MailKind; values?: Record<string, string>; code?: string; action?: { label: MessageKey; href: string } }[] = [
  { kind: 'verifyEmail', code: '123456' },
  { kind: 'resetPassword', code: '234567' },
  { kind: 'emailAddressCode', code: '345678', values: { email: 'new@example.com' } },
  { kind: 'passwordReset', values: { email: 'ada@example.com', time: 'TIME' } },
  { kind: 'passwordChanged', values: { email: 'ada@example.com', time: 'TIME' } },
  { kind: 'passwordChangedOthersSignedOut', values: { email: 'ada@example.com', time: 'TIME' } },
  { kind: 'accountExists', values: { email: 'ada@example.com' } },
  { kind: 'ssoAccountLinked', values: { email: 'ada@example.com', organization: 'Lovelace & Babbage', time: 'TIME' } },
  { kind: 'invitation', values: { expires: 'EXPIRES' }, action: { label: 'mail.invitation.action', href: 'https://app.example/join?invitation_token=inv_x&a=b' } },
  {
    kind: 'organizationInvitation', values: { organization: '<script>alert(1)</script>', role: 'admin', expires: 'EXPIRES' },
    action: { label: 'mail.organizationInvitation.action', href: 'https://app.example/accept?invitation_token=orginv_x' },
  },
];

describe('composeMail: every kind of mail from the catalogue', () => {
  for (const locale of ['en', 'da'] as Locale[]) {
    for (const { kind, values = {}, code, action } of KINDS) {
      it(`renders ${kind} in ${locale}: catalogue subject and text with the values, escaped branded HTML`, () => {
        const t = translator(locale);
        const all = { ...values, product: BRAND.productName, ...(code && { code }) };
        const mail = composeMail({ to: 'x@example.com', kind, locale, brand: BRAND, values, code, action });

        expect(mail.to).toBe('x@example.com');
        expect(mail.subject).toBe(t(`mail.${kind}.subject` as MessageKey, all));
        const parts = [t(`mail.${kind}.intro` as MessageKey, all), code, action && `${t(action.label)}:\n${action.href}`, t(`mail.${kind}.outro` as MessageKey, all)];
        expect(mail.text).toBe([...parts.filter(Boolean), `-- \n${t('mail.footer', all)}`].join('\n\n'));
        for (const value of Object.values(all)) expect(mail.text).toContain(value);

        expect(mail.html).toContain(`<html lang="${locale}"`);
        expect(mail.html).not.toMatch(/\{\{\w+\}\}|#0a0b0c/i);
        expect(mail.html).not.toContain('<script>');
        expect(mail.html).toContain('Acme &lt;Apps&gt; &amp; Co');
        expect(mail.html).toContain('src="https://cdn.acme.example/logo.png?v=1&amp;size=2"');
        if (code) expect(mail.html).toMatch(new RegExp(`>\\s*${code}\\s*<`));
        if (action) {
          expect(mail.html).toContain(`href="${action.href.replaceAll('&', '&amp;')}"`);
          expect(mail.html).toContain('#7b1fa2');
        }
        if (kind === 'organizationInvitation') expect(mail.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
        expect(mail.html).toContain(t(`mail.${kind}.outro` as MessageKey, all).replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll("'", '&#39;').replaceAll('"', '&quot;'));
      });
    }
  }

  it('shows the product name instead of a logo when none is set, and the pages\' blue without a primary colour', () => {
    const mail = composeMail({
      to: 'x@example.com', kind: 'invitation', locale: 'en', brand: { productName: 'Plain', logoUrl: null, primaryColor: null },
      values: { expires: 'soon' }, action: { label: 'mail.invitation.action', href: 'https://app.example/join' },
    });
    expect(mail.html).not.toContain('<img');
    expect(mail.html).toMatch(/>\s*Plain\s*</);
    expect(mail.html).toContain('#1d4ed8');
  });

  it('states times in the recipient\'s language, in UTC', () => {
    expect(mailTime(EXPIRES, 'da')).toBe('24. december 2026 kl. 18.30 UTC');
    expect(mailTime(EXPIRES, 'en')).toMatch(/^December 24, 2026 at 6:30\sPM UTC$/);
  });
});

describe('mail in the recipient\'s language, branded like the pages', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t?.close());

  const branded = (extra: Record<string, unknown> = {}) =>
    t.given.environment({ ...extra, hostedPages: { branding: { productName: 'Acme', logoUrl: 'https://cdn.acme.example/logo.png', primaryColor: '#7b1fa2' } } });
  /** A user whose `locale` is "da" (set the way an app sets it, after creation). */
  const danishUser = async (env: TestEnv, body: Record<string, unknown> = {}) => {
    const user = await t.given.user(env, body);
    expect((await t.server(env).patch(`/users/${user.id}`, { locale: 'da' })).statusCode).toBe(200);
    return user;
  };
  const only = async (env: TestEnv, to: string) => {
    const mails = await t.outbox(env, to);
    expect(mails).toHaveLength(1);
    return mails[0]!;
  };

  it('mails the password reset code of a user with locale "da" in Danish, with the product name, logo and no other data', async () => {
    const env = await branded();
    await danishUser(env, { email: 'bo@example.com', privateMetadata: { secret: 'do-not-mail' } });

    expect((await t.client(env).post('/auth/forgot-password', { email: 'bo@example.com' })).statusCode).toBe(202);

    await expect.poll(async () => (await t.outbox(env, 'bo@example.com')).length).toBe(1);
    const mail = await only(env, 'bo@example.com');
    const code = /^Din kode til nulstilling af adgangskode er (\d{6})$/.exec(mail.subject)?.[1];
    expect(code).toMatch(/^\d{6}$/);
    expect(mail.text).toContain('Indtast denne kode for at vælge en ny adgangskode til din konto hos Acme:');
    expect(mail.text).toContain(code);
    expect(mail.html).toContain('<html lang="da"');
    expect(mail.html).toContain('src="https://cdn.acme.example/logo.png"');
    expect(mail.html).toContain('Sendt af Acme.');
    expect(JSON.stringify(mail)).not.toContain('do-not-mail');
  });

  it('mails a sign-up code in English to a new address, under the environment name when no product name is set', async () => {
    const env = await t.given.environment();
    expect((await t.client(env).post('/auth/sign-up', { email: 'new@example.com', password: PASSWORD })).statusCode).toBe(201);
    const mail = await only(env, 'new@example.com');
    expect(mail.subject).toMatch(/^Your verification code is \d{6}$/);
    expect(mail.text).toContain(`Enter this code to finish signing up to ${env.name}:`);
    expect(mail.html).toContain('<html lang="en"');
    expect(mail.html).not.toContain('<img');
  });

  it('tells the owner of a taken address in their language', async () => {
    const env = await branded({ enumerationProtection: true });
    await danishUser(env, { email: 'taken@example.com' });
    expect((await t.client(env).post('/auth/sign-up', { email: 'taken@example.com', password: PASSWORD })).statusCode).toBe(201);
    const mail = await only(env, 'taken@example.com');
    expect(mail.subject).toBe('Du har allerede en konto');
    expect(mail.text).toContain('Nogen forsøgte at tilmelde sig Acme med taken@example.com');
  });

  it('mails the code for a new address in the user\'s language', async () => {
    const env = await branded();
    const user = await danishUser(env);
    const session = await t.given.session(env, user);
    expect((await t.client(env, { token: session.token }).post('/me/email-addresses', { email: 'second@example.com' })).statusCode).toBe(201);
    const mail = await only(env, 'second@example.com');
    expect(mail.subject).toMatch(/^Din kode til bekræftelse af e-mailadressen er \d{6}$/);
    expect(mail.text).toContain('Indtast denne kode for at tilføje second@example.com til din konto hos Acme:');
  });

  it('writes an invitation in the inviting request\'s Accept-Language, escaping the product name in the HTML', async () => {
    const env = await t.given.environment({ hostedPages: { branding: { productName: 'A&B <Corp>', logoUrl: null, primaryColor: '#7b1fa2' } } });
    const res = await t.server(env).post('/invitations', { email: 'inv@example.com', publicMetadata: {}, privateMetadata: {} }, { headers: { 'accept-language': 'da-DK, en;q=0.5' } });
    expect(res.statusCode).toBe(201);
    const mail = await only(env, 'inv@example.com');
    expect(mail.subject).toBe('Du er inviteret til A&B <Corp>');
    expect(mail.text).toContain('Du er blevet inviteret til A&B <Corp>.');
    expect(mail.text).toContain(`Invitationen udløber ${mailTime(new Date(res.json().expiresAt), 'da')}.`);
    const link = /Opret din konto:\n(http\S+)/.exec(mail.text)![1]!;
    expect(link).toMatch(/\/accept-invitation\?invitation_token=inv_/);
    expect(mail.html).toContain('A&amp;B &lt;Corp&gt;');
    expect(mail.html).not.toContain('<Corp>');
    expect(mail.html).toContain(`href="${link}"`);
    expect(mail.html).toContain('background:#7b1fa2');
  });

  it('writes an invitation in English without Accept-Language', async () => {
    const env = await branded();
    const res = await t.server(env).post('/invitations', { email: 'inv2@example.com', publicMetadata: {}, privateMetadata: {} });
    expect(res.statusCode, res.body).toBe(201);
    expect((await only(env, 'inv2@example.com')).subject).toBe("You're invited to join Acme");
  });

  it('writes an organization invitation in the invitee\'s language when the address has an account, escaping the organization name', async () => {
    const env = await branded();
    const owner = await t.given.user(env);
    await danishUser(env, { email: 'member@example.com' });
    const client = t.client(env, { token: (await t.given.session(env, owner)).token });
    const org = (await client.post('/organizations', { name: '<script>x</script> Org' })).json();

    const res = await client.post(`/organizations/${org.id}/invitations`, { email: 'member@example.com', role: 'member' }, { headers: { 'accept-language': 'en' } });

    expect(res.statusCode).toBe(201);
    const mail = await only(env, 'member@example.com');
    expect(mail.subject).toBe('Du er inviteret til <script>x</script> Org');
    expect(mail.text).toContain('Du er blevet inviteret til <script>x</script> Org hos Acme som member.');
    expect(mail.text).toContain(`invitation_token=${res.json().token}`);
    expect(mail.html).toContain('&lt;script&gt;x&lt;/script&gt; Org');
    expect(mail.html).not.toContain('<script>');
  });
});
