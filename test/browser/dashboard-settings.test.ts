import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { type DashboardStage, heading, signedInPage, startDashboardStage } from './dashboard-stage.js';

/** Waits, as long as a busy machine may need, for what the page is on its way to show. */
const eventually = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: PATIENCE_MS, interval: 50 });

describe.skipIf(!hasChromium)('the environment screens of the dashboard in a real browser (headless Chromium)', () => {
  let stage: DashboardStage;
  let t: TestApp;
  let base: string;
  let env: TestEnv;
  const tag = `settings${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag);
    ({ t, base, env } = stage);
  }, 180_000);
  afterAll(() => stage?.close());

  // The secret key screen's copy button writes to the clipboard.
  const signedInWithClipboard = (path: string) => signedInPage(stage, path, { permissions: ['clipboard-read', 'clipboard-write'] });

  const settingsOf = async (id: string) => (await t.admin.get(`/environments/${id}`)).json().settings;

  it('changes settings through the generated form, sends only what changed, keeps them across a reload, and shows refused fields next to them', async () => {
    const { context, page, foreign, refused } = await signedInWithClipboard(`/environments/${env.id}/settings`);
    await eventually(() => heading(page, 'Environment settings').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${env.id}/settings`);
    const passwords = page.getByRole('group', { name: 'Password policy' });
    await eventually(() => passwords.getByLabel('Min length').inputValue()).toBe('8');
    expect(await accessibilityProblems(page)).toEqual([]);

    // Each kind of setting as its control: a number input in a fieldset, a checkbox, a select, a clearable URL.
    expect(await page.getByLabel('Enumeration protection').getAttribute('type')).toBe('checkbox');
    expect(await page.getByRole('group', { name: 'MFA' }).getByLabel('Policy').evaluate((el) => el.tagName)).toBe('SELECT');
    expect(await page.getByLabel('Sign up URL').getAttribute('type')).toBe('url');
    expect(await page.getByText('Wrong passwords in a row that lock an account.').count()).toBe(1);

    const patches: unknown[] = [];
    page.on('request', (request) => { if (request.method() === 'PATCH') patches.push(request.postDataJSON()); });
    await passwords.getByLabel('Min length').fill('12');
    await page.getByLabel('Enumeration protection').check();
    await page.getByRole('group', { name: 'MFA' }).getByLabel('Policy').selectOption('required');
    await page.getByLabel('Sign up URL').fill('https://app.example.com/sign-up');
    await eventually(() => page.getByText('You have unsaved changes.').count()).toBe(1);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await eventually(() => page.getByRole('status').filter({ hasText: 'Saved:' }).count()).toBe(1);
    expect(patches).toEqual([{ settings: { passwordPolicy: { minLength: 12 }, enumerationProtection: true, mfa: { policy: 'required' }, signUpUrl: 'https://app.example.com/sign-up' } }]);

    const saved = await settingsOf(env.id);
    expect(saved.passwordPolicy).toEqual({ minLength: 12, maxLength: 256 });
    expect(saved.enumerationProtection).toBe(true);
    expect(saved.mfa.policy).toBe('required');
    expect(saved.signUpUrl).toBe('https://app.example.com/sign-up');
    expect(saved.lockout.maxFailedAttempts).toBe(10);

    // A deep link: a reload lands on the same screen, showing what was saved.
    await page.reload();
    await eventually(() => page.getByRole('group', { name: 'Password policy' }).getByLabel('Min length').inputValue()).toBe('12');
    expect(await page.getByLabel('Enumeration protection').isChecked()).toBe(true);
    expect(await page.getByRole('group', { name: 'MFA' }).getByLabel('Policy').inputValue()).toBe('required');

    // A nullable setting is cleared back to null.
    await page.getByRole('button', { name: 'Clear Sign up URL' }).click();
    expect(await page.getByLabel('Sign up URL').inputValue()).toBe('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await eventually(async () => (await settingsOf(env.id)).signUpUrl).toBeNull();
    expect(patches.at(-1)).toEqual({ settings: { signUpUrl: null } });

    // A value the server refuses: its problem+json field error stands next to the field, and nothing is saved.
    await page.getByRole('group', { name: 'Password policy' }).getByLabel('Min length').fill('300');
    await page.getByRole('button', { name: 'Save settings' }).click();
    const fieldError = page.locator('#setting-passwordPolicy-minLength-error');
    await eventually(() => fieldError.count()).toBe(1);
    expect(await fieldError.textContent()).toMatch(/^Min length: .*256/);
    expect(await page.getByRole('group', { name: 'Password policy' }).getByLabel('Min length').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByRole('alert').textContent()).toContain('invalid_request');
    expect((await settingsOf(env.id)).passwordPolicy.minLength).toBe(12);
    expect(await accessibilityProblems(page)).toEqual([]);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('creates a secret key shown once with a copy button, and revokes it so it no longer authenticates', async () => {
    const { context, page, foreign, refused } = await signedInWithClipboard(`/environments/${env.id}/settings`);
    const section = page.getByRole('region', { name: 'Secret keys' });
    await eventually(() => section.locator('tbody tr').count()).toBe(1);
    expect(await section.locator('tbody tr').first().textContent()).toContain(`sk_…${env.secretKey.slice(-4)}`);

    await section.getByRole('button', { name: 'Create secret key' }).click();
    const once = page.getByRole('region', { name: 'New secret key' });
    await eventually(() => once.count()).toBe(1);
    const secret = await once.getByLabel('New secret key').inputValue();
    expect(secret).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(await once.textContent()).toContain('shown only this once');
    expect((await t.server(env, secret).get('/allowed-origins')).statusCode).toBe(200);
    await eventually(() => section.locator('tbody tr').count()).toBe(2);
    expect(await accessibilityProblems(page)).toEqual([]);

    await once.getByRole('button', { name: 'Copy' }).click();
    await eventually(() => once.getByRole('status').textContent()).toBe('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await once.getByRole('button', { name: 'I have copied it' }).click();
    await eventually(() => once.count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    const hint = `sk_…${secret.slice(-4)}`;
    await section.getByRole('button', { name: `Revoke key ${hint}` }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this secret key?' });
    await eventually(() => dialog.isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await eventually(() => section.getByRole('status').textContent()).toContain('is revoked');
    expect((await t.server(env, secret).get('/allowed-origins')).statusCode).toBe(401);
    expect((await t.server(env).get('/allowed-origins')).statusCode).toBe(200);
    // The status is said before the list has refreshed: the revoked row is waited for, not read once.
    await eventually(() => section.locator('tbody tr', { hasText: hint }).locator('.badge').textContent()).toBe('Revoked');
    expect(await section.getByRole('button', { name: `Revoke key ${hint}` }).count()).toBe(0);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it("adds an allowed origin, shows the server's refusal of a bad one, and removes it after a confirmation", async () => {
    const { context, page } = await signedInWithClipboard(`/environments/${env.id}/settings`);
    const section = page.getByRole('region', { name: 'Allowed origins' });
    await eventually(() => section.getByText('No origin is allowed yet.').count()).toBe(1);

    await section.getByLabel('Origin', { exact: true }).fill('https://app.example.com/path');
    await section.getByRole('button', { name: 'Add origin' }).click();
    await eventually(() => section.locator('#new-origin-error').textContent()).toContain('is not a full origin');
    expect((await t.server(env).get('/allowed-origins')).json().origins).toEqual([]);
    expect(await accessibilityProblems(page)).toEqual([]);

    await section.getByLabel('Origin', { exact: true }).fill('https://app.example.com');
    await section.getByRole('button', { name: 'Add origin' }).click();
    await eventually(() => section.getByRole('list', { name: 'Allowed origins' }).getByRole('listitem').count()).toBe(1);
    expect((await t.server(env).get('/allowed-origins')).json().origins).toEqual(['https://app.example.com']);
    expect(await section.locator('#new-origin-error').count()).toBe(0);

    await section.getByRole('button', { name: 'Remove https://app.example.com' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove this origin?' });
    await eventually(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Remove origin' }).click();
    await eventually(() => section.getByText('No origin is allowed yet.').count()).toBe(1);
    expect((await t.server(env).get('/allowed-origins')).json().origins).toEqual([]);
    await context.close();
  });

  it('adds, edits and deletes an OAuth provider, never showing its client secret', async () => {
    const { context, page } = await signedInWithClipboard(`/environments/${env.id}/settings`);
    const section = page.getByRole('region', { name: 'OAuth providers' });
    await eventually(() => section.getByText('No external provider is set up.').count()).toBe(1);

    await section.getByRole('button', { name: 'Add provider' }).click();
    const form = section.getByRole('form', { name: 'Add a provider' });
    await form.getByLabel('Provider ID').fill('corp-github');
    await form.getByLabel('Type').selectOption('github');
    await form.getByLabel('Name', { exact: true }).fill('Corp GitHub');
    await form.getByLabel('Client ID').fill('client-123');
    await form.getByLabel('Client secret').fill('very-secret-value');
    expect(await form.getByLabel('Client secret').getAttribute('type')).toBe('password');
    expect(await accessibilityProblems(page)).toEqual([]);
    await form.getByRole('button', { name: 'Add provider' }).click();
    await eventually(() => section.locator('tbody tr').count()).toBe(1);
    const stored = (await t.admin.get(`/environments/${env.id}/oauth-providers/corp-github`)).json();
    expect(stored).toMatchObject({ id: 'corp-github', type: 'github', name: 'Corp GitHub', clientId: 'client-123', enabled: true });
    expect(await section.locator('tbody tr').textContent()).toContain(stored.callbackUrl);

    await section.getByRole('button', { name: 'Edit Corp GitHub' }).click();
    const edit = section.getByRole('form', { name: 'Edit Corp GitHub' });
    expect(await edit.getByLabel('Client secret').inputValue()).toBe('');
    expect(await edit.getByLabel('Provider ID').isDisabled()).toBe(true);
    await edit.getByLabel('Name', { exact: true }).fill('Corporate GitHub');
    await edit.getByLabel('Enabled').uncheck();
    await edit.getByRole('button', { name: 'Save provider' }).click();
    await eventually(async () => (await t.admin.get(`/environments/${env.id}/oauth-providers/corp-github`)).json().name).toBe('Corporate GitHub');
    expect((await t.admin.get(`/environments/${env.id}/oauth-providers/corp-github`)).json().enabled).toBe(false);
    await eventually(() => section.locator('tbody tr').textContent()).toContain('Corporate GitHub');
    expect(await page.content()).not.toContain('very-secret-value');

    await section.getByRole('button', { name: 'Delete Corporate GitHub' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this provider?' });
    await eventually(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Delete provider' }).click();
    await eventually(() => section.getByText('No external provider is set up.').count()).toBe(1);
    expect((await t.admin.get(`/environments/${env.id}/oauth-providers/corp-github`)).statusCode).toBe(404);
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it('rotates the signing key and revokes the retired one, each after a confirmation', async () => {
    const { context, page } = await signedInWithClipboard(`/environments/${env.id}/settings`);
    const section = page.getByRole('region', { name: 'Signing keys' });
    await eventually(() => section.locator('tbody tr').count()).toBe(1);
    const first = (await t.admin.get(`/environments/${env.id}/signing-keys`)).json().items[0];
    expect(first.status).toBe('active');

    await section.getByRole('button', { name: 'Rotate signing key' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate the signing key?' });
    await eventually(() => rotate.isVisible()).toBe(true);
    await rotate.getByRole('button', { name: 'Rotate key' }).click();
    await eventually(() => section.locator('tbody tr').count()).toBe(2);
    const keys = (await t.admin.get(`/environments/${env.id}/signing-keys`)).json().items as { id: string; status: string }[];
    expect(keys.find((key) => key.id === first.id)?.status).toBe('retired');
    expect(keys.filter((key) => key.status === 'active')).toHaveLength(1);
    expect(await section.locator('tbody tr', { hasText: first.id }).locator('.badge').textContent()).toBe('Retired');
    expect(await accessibilityProblems(page)).toEqual([]);

    await section.getByRole('button', { name: `Revoke signing key ${first.id}` }).click();
    const revoke = page.getByRole('dialog', { name: 'Revoke this signing key?' });
    await eventually(() => revoke.isVisible()).toBe(true);
    await revoke.getByRole('button', { name: 'Revoke key' }).click();
    await eventually(() => section.locator('tbody tr', { hasText: first.id }).locator('.badge').textContent()).toBe('Revoked');
    const after = (await t.admin.get(`/environments/${env.id}/signing-keys`)).json().items as { id: string; status: string }[];
    expect(after.find((key) => key.id === first.id)?.status).toBe('revoked');
    await context.close();
  });

  it('lists environments with links to their users and settings, and creates one whose first secret key is shown once', async () => {
    const { context, page, foreign, refused } = await signedInWithClipboard('/environments');
    await eventually(() => heading(page, 'Environments').count()).toBe(1);
    await eventually(() => page.getByRole('link', { name: `Settings of ${tag}` }).count()).toBe(1);
    expect(await page.getByRole('link', { name: `Users of ${tag}` }).getAttribute('href')).toBe(`/dashboard/environments/${env.id}/users`);
    expect(await accessibilityProblems(page)).toEqual([]);

    const name = `${tag}-new`;
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Create environment' }).click();
    const once = page.getByRole('region', { name: `Secret key of ${name}` });
    await eventually(() => once.count()).toBe(1);
    const secret = await once.getByLabel(`Secret key of ${name}`).inputValue();
    const created = ((await t.admin.get('/environments')).json().items as TestEnv[]).find((e) => e.name === name)!;
    expect((await t.server({ ...created, secretKey: secret }).get('/allowed-origins')).statusCode).toBe(200);
    await eventually(() => page.getByRole('link', { name: `Settings of ${name}` }).count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await once.getByRole('button', { name: 'I have copied it' }).click();
    await eventually(() => once.count()).toBe(0);

    await page.getByRole('link', { name: `Settings of ${name}` }).click();
    await eventually(() => heading(page, 'Environment settings').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${created.id}/settings`);
    await eventually(() => page.getByRole('region', { name: 'Secret keys' }).locator('tbody tr').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    // An empty name: the server's refusal is shown, and nothing is created.
    await page.goto(`${base}/dashboard/environments`);
    await eventually(() => heading(page, 'Environments').count()).toBe(1);
    await page.getByRole('button', { name: 'Create environment' }).click();
    await eventually(() => page.getByRole('alert').count()).toBe(1);
    expect(await page.getByRole('alert').textContent()).toContain('invalid_request');
    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });
});
