import { randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/platform/crypto/encryption.js';
import { TEST_ENCRYPTION_KEY, type TestApp, type TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { type DashboardStage, heading, signedInPage, startDashboardStage } from './dashboard-stage.js';

/** Waits, as long as a busy machine may need, for what the page is on its way to show. */
const eventually = <T>(read: () => Promise<T> | T) => expect.poll(read, { timeout: PATIENCE_MS, interval: 50 });

const sealer = createSealer(TEST_ENCRYPTION_KEY);
const WHSEC = /^whsec_[A-Za-z0-9+/]+={0,2}$/;

/**
 * The webhook screens. Jobs stay queued (`jobsInBackground: false`, on PostgreSQL a database of the file's
 * own) and run only when a test calls `t.app.runJobs()`, so a delivery is looked at in the state it is left in.
 * Private targets are allowed, so a delivery can go to this app itself (a path that answers 404: a receiver
 * that is not there); a link-local address is refused whatever that setting, which fails a delivery at once.
 */
describe.skipIf(!hasChromium)('the webhook screens of the dashboard in a real browser (headless Chromium)', () => {
  let stage: DashboardStage;
  let t: TestApp;
  let base: string;
  let env: TestEnv;
  const tag = `webhooks${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag, { jobsInBackground: false, webhooks: { sender: { privateTargets: 'allow', timeoutMs: PATIENCE_MS } } }, { ownDatabase: true });
    ({ t, base, env } = stage);
  }, 180_000);
  afterAll(() => stage?.close());

  const signedInWithClipboard = (path: string) => signedInPage(stage, path, { permissions: ['clipboard-read', 'clipboard-write'] });
  const endpointsOf = async (of: TestEnv) => (await t.server(of).get('/webhook-endpoints')).json().items;
  const storedSecret = async (endpointId: string) => {
    const row = await t.db.selectFrom('webhook_endpoints').select('secret_sealed').where('id', '=', endpointId).executeTakeFirstOrThrow();
    return sealer.open(row.secret_sealed).toString('utf8');
  };
  const patchesOf = (page: Page) => {
    const patches: unknown[] = [];
    page.on('request', (request) => { if (request.method() === 'PATCH') patches.push(request.postDataJSON()); });
    return patches;
  };

  it('adds an endpoint for all events with its secret shown once, shows refused fields next to them, edits its event types and disables it', async () => {
    const { context, page, foreign, refused } = await signedInWithClipboard(`/environments/${env.id}/webhooks`);
    await eventually(() => heading(page, 'Webhooks').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${env.id}/webhooks`);
    await eventually(() => page.getByText('This environment has no webhook endpoints yet.').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current')).toBe('page');
    const add = page.getByRole('region', { name: 'Add endpoint' });
    expect(await add.getByLabel('All events').isChecked()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);

    // The server's refusal stands next to the field; nothing is stored.
    await add.getByLabel('URL', { exact: true }).fill('ftp://hooks.example.com/gatehouse');
    await add.getByRole('button', { name: 'Add endpoint' }).click();
    const urlError = add.locator('#new-endpoint-url-error');
    await eventually(() => urlError.count()).toBe(1);
    expect(await urlError.textContent()).toMatch(/^URL: .+/);
    expect(await add.getByLabel('URL', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    expect(await add.getByRole('alert').textContent()).toContain('invalid_request');
    expect(await endpointsOf(env)).toEqual([]);
    expect(await accessibilityProblems(page)).toEqual([]);

    await add.getByLabel('URL', { exact: true }).fill('https://hooks.example.com/gatehouse');
    await add.getByLabel('Description (optional)').fill('Billing sync');
    await add.getByRole('button', { name: 'Add endpoint' }).click();
    const once = page.getByRole('region', { name: 'Signing secret' });
    await eventually(() => once.count()).toBe(1);
    const secret = await once.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(WHSEC);
    expect(await once.textContent()).toContain('shown only this once');
    const [stored] = await endpointsOf(env);
    expect(await endpointsOf(env)).toEqual([{
      id: expect.any(String), url: 'https://hooks.example.com/gatehouse', description: 'Billing sync', eventTypes: null, enabled: true, disabledReason: null,
      createdAt: expect.any(String), updatedAt: expect.any(String),
    }]);
    expect(await storedSecret(stored.id)).toBe(secret);
    await once.getByRole('button', { name: 'Copy' }).click();
    await eventually(() => once.getByRole('status').textContent()).toBe('Copied to the clipboard.');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    expect(await add.locator('#new-endpoint-url-error').count()).toBe(0);
    const row = page.locator('tbody tr', { hasText: 'https://hooks.example.com/gatehouse' });
    await eventually(() => row.count()).toBe(1);
    expect(await row.locator('td').allTextContents()).toEqual(['https://hooks.example.com/gatehouse', 'Billing sync', 'All events', 'Enabled', expect.any(String)]);
    expect(await accessibilityProblems(page)).toEqual([]);
    await once.getByRole('button', { name: 'I have copied it' }).click();
    await eventually(() => once.count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    // The endpoint's screen: chosen event types replace "All events", and only they are sent.
    await row.getByRole('link', { name: 'https://hooks.example.com/gatehouse' }).click();
    await eventually(() => heading(page, 'Webhook endpoint').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${env.id}/webhooks/${stored.id}`);
    const patches = patchesOf(page);
    const settings = page.getByRole('region', { name: 'Settings' });
    await settings.getByLabel('All events').uncheck();
    await settings.getByLabel('session.created').check();
    await settings.getByLabel('user.created').check();
    expect(await accessibilityProblems(page)).toEqual([]);
    await settings.getByRole('button', { name: 'Save changes' }).click();
    await eventually(() => settings.getByRole('status').filter({ hasText: 'Changes saved.' }).count()).toBe(1);
    expect(patches).toEqual([{ eventTypes: ['user.created', 'session.created'] }]);
    expect((await endpointsOf(env))[0]).toMatchObject({ eventTypes: ['user.created', 'session.created'], description: 'Billing sync', enabled: true });
    // The status is said a task before the endpoint's fields re-render (TanStack Query notifies on a timer).
    await eventually(() => settings.locator('dl').textContent()).toContain('user.created, session.created');

    await settings.getByRole('button', { name: 'Disable endpoint' }).click();
    await eventually(() => settings.locator('dl .badge').textContent()).toBe('Disabled');
    expect(patches.at(-1)).toEqual({ enabled: false });
    expect((await endpointsOf(env))[0]).toMatchObject({ enabled: false, disabledReason: 'manual' });
    expect(await settings.getByRole('button', { name: 'Enable endpoint' }).count()).toBe(1);

    // A deep link: a reload shows what was saved; the list shows it disabled.
    await page.reload();
    await eventually(() => page.getByRole('region', { name: 'Settings' }).locator('dl .badge').textContent()).toBe('Disabled');
    await page.getByRole('link', { name: '← All webhook endpoints' }).click();
    await eventually(() => page.locator('tbody tr').first().locator('td').nth(3).textContent()).toBe('Disabled');
    expect(await page.locator('tbody tr').first().locator('td').nth(2).textContent()).toBe('user.created, session.created');

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('rotates the secret after a confirmation, showing the new one once, and deletes the endpoint after a confirmation', async () => {
    const mine = await t.given.environment();
    const created = (await t.server(mine).post('/webhook-endpoints', { url: 'https://hooks.example.com/rotate' })).json();
    const { context, page } = await signedInWithClipboard(`/environments/${mine.id}/webhooks/${created.id}`);
    await eventually(() => heading(page, 'Webhook endpoint').count()).toBe(1);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotate = page.getByRole('dialog', { name: 'Rotate the signing secret?' });
    await eventually(() => rotate.isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(await storedSecret(created.id)).toBe(created.secret);
    await rotate.getByRole('button', { name: 'Rotate secret' }).click();
    const once = page.getByRole('region', { name: 'New signing secret' });
    await eventually(() => once.count()).toBe(1);
    const secret = await once.getByLabel('New signing secret').inputValue();
    expect(secret).toMatch(WHSEC);
    expect(secret).not.toBe(created.secret);
    expect(await storedSecret(created.id)).toBe(secret);
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    const remove = page.getByRole('dialog', { name: 'Delete this webhook endpoint?' });
    await eventually(() => remove.isVisible()).toBe(true);
    await remove.getByRole('button', { name: 'Cancel' }).click();
    await eventually(() => remove.isVisible()).toBe(false);
    expect((await t.server(mine).get(`/webhook-endpoints/${created.id}`)).statusCode).toBe(200);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await remove.getByRole('button', { name: 'Delete endpoint' }).click();
    await eventually(() => heading(page, 'Webhooks').count()).toBe(1);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/environments/${mine.id}/webhooks`);
    await eventually(() => page.getByText('This environment has no webhook endpoints yet.').count()).toBe(1);
    expect((await t.server(mine).get(`/webhook-endpoints/${created.id}`)).statusCode).toBe(404);
    await context.close();
  });

  it('makes an endpoint the delivery job disabled for failing stand out, in the list and on its screen, and enables it again', async () => {
    const mine = await t.given.environment();
    const endpoint = (await t.server(mine).post('/webhook-endpoints', { url: 'https://hooks.example.com/failing' })).json();
    // As the delivery job leaves an endpoint whose every delivery failed for days (test/webhooks covers how).
    await t.db.updateTable('webhook_endpoints').where('environment_id', '=', mine.id).where('id', '=', endpoint.id)
      .set({ enabled: false, disabled_reason: 'failing' }).execute();
    const { context, page } = await signedInPage(stage, `/environments/${mine.id}/webhooks`);
    const row = page.locator('tbody tr');
    await eventually(() => row.locator('.badge').textContent()).toBe('Disabled: failing');
    expect(await row.getAttribute('class')).toBe('webhook-failing');
    expect(await accessibilityProblems(page)).toEqual([]);
    await row.getByRole('link', { name: 'https://hooks.example.com/failing' }).click();
    const settings = page.getByRole('region', { name: 'Settings' });
    await eventually(() => settings.locator('dl .badge').textContent()).toBe('Disabled: failing');
    expect(await settings.getByText('Every delivery to this endpoint failed for days').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await settings.getByRole('button', { name: 'Enable endpoint' }).click();
    await eventually(() => settings.locator('dl .badge').textContent()).toBe('Enabled');
    expect((await t.server(mine).get(`/webhook-endpoints/${endpoint.id}`)).json()).toMatchObject({ enabled: true, disabledReason: null });
    await context.close();
  });

  it('shows 409 webhook_endpoint_limit when the environment already has 20 endpoints', async () => {
    const full = await t.given.environment();
    for (let i = 0; i < 20; i++) expect((await t.server(full).post('/webhook-endpoints', { url: `https://hooks.example.com/${i}` })).statusCode).toBe(201);
    const { context, page } = await signedInPage(stage, `/environments/${full.id}/webhooks`);
    await eventually(() => page.locator('tbody tr').count()).toBe(20);
    const add = page.getByRole('region', { name: 'Add endpoint' });
    await add.getByLabel('URL', { exact: true }).fill('https://hooks.example.com/one-too-many');
    await add.getByRole('button', { name: 'Add endpoint' }).click();
    await eventually(() => add.getByRole('alert').textContent()).toContain('webhook_endpoint_limit');
    expect(await add.getByRole('region', { name: 'Signing secret' }).count()).toBe(0);
    expect(await endpointsOf(full)).toHaveLength(20);
    await context.close();
  });

  it("pages an endpoint's deliveries by the server's cursor, 25 at a time, the cursor kept in the URL", async () => {
    const mine = await t.given.environment();
    // A link-local target: when a later test runs the jobs, these deliveries fail at once, with no network call.
    const endpoint = (await t.server(mine).post('/webhook-endpoints', { url: 'http://169.254.169.254/pages', eventTypes: ['user.created'] })).json();
    for (let i = 0; i < 26; i++) { t.clock.advance(1000); await t.given.user(mine); }
    const firstPage = (await t.server(mine).get(`/webhook-endpoints/${endpoint.id}/deliveries?limit=25`)).json();
    const [oldest] = (await t.server(mine).get(`/webhook-endpoints/${endpoint.id}/deliveries?limit=25&cursor=${firstPage.nextCursor}`)).json().items;

    const { context, page } = await signedInPage(stage, `/environments/${mine.id}/webhooks/${endpoint.id}`);
    const rows = page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr');
    await eventually(() => rows.count()).toBe(25);
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-delivery')))).toEqual(firstPage.items.map((d: { id: string }) => d.id));
    await page.getByRole('link', { name: 'Older deliveries' }).click();
    await eventually(() => rows.count()).toBe(1);
    expect(await rows.getAttribute('data-delivery')).toBe(oldest.id);
    expect(new URL(page.url()).searchParams.get('cursor')).toBe(firstPage.nextCursor);
    expect(await page.getByRole('link', { name: 'Older deliveries' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Newest deliveries' }).click();
    await eventually(() => rows.count()).toBe(25);
    expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
    await context.close();
  });

  it("lists an endpoint's deliveries newest first with their attempts, filters them by status in the URL, and Retry makes a failed one pending", async () => {
    const mine = await t.given.environment();
    // A receiver that is not there (this app answers 404) and a target never allowed (link-local).
    const absent = (await t.server(mine).post('/webhook-endpoints', { url: `${base}/no-receiver-here`, eventTypes: ['user.created'] })).json();
    const refusedTarget = (await t.server(mine).post('/webhook-endpoints', { url: 'http://169.254.169.254/gatehouse', eventTypes: ['user.created'] })).json();
    await t.given.user(mine);
    expect(await t.app.runJobs()).toBeGreaterThanOrEqual(2);
    t.clock.advance(1000);
    await t.given.user(mine);
    const deliveriesOf = async (endpointId: string) => (await t.server(mine).get(`/webhook-endpoints/${endpointId}/deliveries`)).json().items;
    const [newest, tried] = await deliveriesOf(absent.id);
    expect(tried).toMatchObject({ type: 'user.created', status: 'pending', attempt: 1, responseStatus: 404, nextAttemptAt: expect.any(String) });
    expect(newest).toMatchObject({ type: 'user.created', status: 'pending', attempt: 0, attempts: [] });
    expect(tried.attempts[0].responseBody).toBeTruthy();

    const { context, page, foreign, refused } = await signedInPage(stage, `/environments/${mine.id}/webhooks/${absent.id}`);
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    const rows = deliveries.locator('tbody tr');
    await eventually(() => rows.count()).toBe(2);
    const cells = (index: number) => rows.nth(index).locator('td');
    expect(await rows.nth(0).getAttribute('data-delivery')).toBe(newest.id);
    expect(await cells(0).nth(1).textContent()).toBe('user.created');
    expect(await cells(0).nth(2).textContent()).toBe('Pending');
    expect(await cells(0).nth(3).textContent()).toBe('None yet');
    expect(await cells(1).nth(2).textContent()).toBe('Pending');
    expect(await cells(1).nth(4).textContent()).toBe('404');
    // The next attempt's time as the browser writes it (its locale), never a dash while pending.
    expect(await cells(1).nth(5).textContent()).toBe(await page.evaluate((iso) => new Date(iso).toLocaleString(), tried.nextAttemptAt as string));
    await cells(1).getByText('1 attempt').click();
    const attempt = cells(1).getByRole('listitem');
    await eventually(() => attempt.isVisible()).toBe(true);
    expect(await attempt.textContent()).toContain(`Attempt 1: HTTP 404 in ${tried.attempts[0].durationMs} ms`);
    expect(await attempt.getByLabel('Response body of attempt 1').textContent()).toBe(tried.attempts[0].responseBody);
    expect(await accessibilityProblems(page)).toEqual([]);

    // The refused target's delivery failed at once, with its reason; Retry puts it back to pending.
    await page.goto(`${base}/dashboard/environments/${mine.id}/webhooks/${refusedTarget.id}?status=failed`);
    await eventually(() => page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr').count()).toBe(1);
    const failedRow = page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr');
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('failed');
    const [failed] = await deliveriesOf(refusedTarget.id).then((items) => items.filter((d: { status: string }) => d.status === 'failed'));
    expect(await failedRow.getAttribute('data-delivery')).toBe(failed.id);
    expect(await failedRow.locator('td').nth(2).textContent()).toBe('Failed');
    expect(await failedRow.locator('td').nth(5).textContent()).toBe('—');
    await failedRow.getByText('1 attempt').click();
    expect(await failedRow.getByRole('listitem').textContent()).toMatch(/Attempt 1: no answer in \d+ ms.*Error: .*169\.254\.169\.254 is a link-local/);
    expect(await accessibilityProblems(page)).toEqual([]);

    await failedRow.getByRole('button', { name: /^Retry/ }).click();
    await eventually(() => page.getByRole('region', { name: 'Deliveries' }).getByRole('status').textContent()).toBe('The user.created delivery is due again now.');
    await eventually(() => page.getByText('No failed deliveries to this endpoint.').count()).toBe(1);
    expect((await deliveriesOf(refusedTarget.id)).find((d: { id: string }) => d.id === failed.id)).toMatchObject({ status: 'pending', nextAttemptAt: expect.any(String) });

    // The filter follows the URL: All shows both deliveries, the retried one now pending.
    await page.getByLabel('Status', { exact: true }).selectOption('all');
    await eventually(() => new URL(page.url()).search).toBe('');
    await eventually(() => page.getByRole('region', { name: 'Deliveries' }).locator(`tbody tr[data-delivery="${failed.id}"] td`).nth(2).textContent()).toBe('Pending');
    await page.getByLabel('Status', { exact: true }).selectOption('pending');
    await eventually(() => new URL(page.url()).searchParams.get('status')).toBe('pending');
    await eventually(() => page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr').count()).toBe(2);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });
});
