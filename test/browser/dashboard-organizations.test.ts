import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';
import { accessibilityProblems, hasChromium } from '../helpers/browser.js';
import { type DashboardStage, exactHeading as heading, signedInPage, startDashboardStage } from './dashboard-stage.js';

describe.skipIf(!hasChromium)('the dashboard\'s organizations screens in a real browser (headless Chromium)', () => {
  let stage: DashboardStage;
  let t: TestApp;
  let env: TestEnv;
  const tag = `orgs${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stage = await startDashboardStage(tag);
    ({ t, env } = stage);
  }, 180_000);
  afterAll(() => stage?.close());

  const membersOf = async (organizationId: string) =>
    (await t.server(env).get(`/organizations/${organizationId}/members`)).json().items.map((m: { userId: string; role: string }) => [m.userId, m.role]);

  it('creates an organization, adds a member, changes their role, invites and revokes, removes the member, renames and deletes it', async () => {
    const created = await t.server(env).post('/users', { email: `ada-${tag}@example.com`, firstName: 'Ada', lastName: 'Lovelace' });
    expect(created.statusCode, created.body).toBe(201);
    const ada = created.json();
    // Its email contains ada's: the dashboard adds the user whose email is exactly the one typed.
    expect((await t.server(env).post('/users', { email: `xada-${tag}@example.com` })).statusCode).toBe(201);
    const { context, page, foreign, refused } = await signedInPage(stage, `/environments/${env.id}/organizations`);

    await expect.poll(() => heading(page, 'Organizations').count()).toBe(1);
    await expect.poll(() => page.getByText('This environment has no organizations yet.').count()).toBe(1);
    expect(await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Organizations' }).getAttribute('aria-current')).toBe('page');
    expect(await accessibilityProblems(page)).toEqual([]);

    // A refused slug shows the server's problem and creates nothing.
    await page.getByLabel('Name', { exact: true }).fill('Acme');
    await page.getByLabel('Slug (optional)').fill('Not A Slug');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('invalid_request');
    expect((await t.server(env).get('/organizations')).json().items).toEqual([]);

    await page.getByLabel('Slug (optional)').fill(`acme-${tag}`);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await expect.poll(() => heading(page, 'Acme').count()).toBe(1);
    const organizationId = new URL(page.url()).pathname.split('/').at(-1)!;
    expect((await t.server(env).get(`/organizations/${organizationId}`)).json()).toMatchObject({ name: 'Acme', slug: `acme-${tag}` });
    await expect.poll(() => page.getByText('This organization has no members yet.').count()).toBe(1);
    await expect.poll(() => page.getByText('No pending invitations.').count()).toBe(1);
    const roles = page.getByRole('table', { name: 'Roles' });
    await expect.poll(() => roles.locator('tbody tr td:first-child').allTextContents()).toEqual(['Owner', 'Admin', 'Member']);
    expect(await roles.locator('tbody tr').nth(2).textContent()).toContain('None');
    expect(await roles.locator('tbody tr').nth(1).textContent()).toContain('members:manage');
    expect(await accessibilityProblems(page)).toEqual([]);

    // Adding an email no user has is refused in words; the exact email is found among its substrings' users.
    await page.getByLabel('Email', { exact: true }).first().fill(`nobody-${tag}@example.com`);
    await page.getByRole('button', { name: 'Add member' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(`No user of this environment has the email nobody-${tag}@example.com.`);
    await page.getByLabel('Email', { exact: true }).first().fill(`ada-${tag}@example.com`);
    await page.getByLabel('Role', { exact: true }).first().selectOption('member');
    await page.getByRole('button', { name: 'Add member' }).click();
    const members = page.getByRole('table', { name: 'Members' });
    await expect.poll(() => members.getByRole('link', { name: `ada-${tag}@example.com` }).count()).toBe(1);
    expect(await members.getByRole('link', { name: `ada-${tag}@example.com` }).getAttribute('href')).toBe(`/dashboard/environments/${env.id}/users/${ada.id}`);
    expect(await membersOf(organizationId)).toEqual([[ada.id, 'member']]);

    await page.getByLabel(`Role of ada-${tag}@example.com`, { exact: true }).selectOption('admin');
    await page.getByRole('button', { name: `Change role of ada-${tag}@example.com` }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `ada-${tag}@example.com is now Admin.` }).count()).toBe(1);
    expect(await membersOf(organizationId)).toEqual([[ada.id, 'admin']]);
    expect(await accessibilityProblems(page)).toEqual([]);

    // Invite by email with a role: mailed (hosted pages are on), listed pending; then revoked behind a confirmation.
    const invitee = `grace-${tag}@example.com`;
    const inviteForm = page.getByRole('form', { name: 'Invite by email' });
    await inviteForm.getByLabel('Email', { exact: true }).fill(invitee);
    await inviteForm.getByLabel('Role', { exact: true }).selectOption('admin');
    await inviteForm.getByRole('button', { name: 'Send invitation' }).click();
    await expect.poll(() => page.getByRole('status').filter({ hasText: `Invitation mailed to ${invitee}.` }).count()).toBe(1);
    const pending = page.getByRole('table', { name: 'Pending invitations' });
    await expect.poll(() => pending.locator('tbody tr').count()).toBe(1);
    expect(await pending.locator('tbody tr td').allTextContents()).toEqual(expect.arrayContaining([invitee, 'admin', 'Pending']));
    expect((await t.outbox(env, invitee)).map((mail) => mail.subject)).toEqual(["You're invited to join Acme"]);
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('button', { name: `Revoke the invitation of ${invitee}` }).click();
    const revokeDialog = page.getByRole('dialog', { name: 'Revoke this invitation?' });
    await expect.poll(() => revokeDialog.isVisible()).toBe(true);
    expect(await accessibilityProblems(page)).toEqual([]);
    await revokeDialog.getByRole('button', { name: 'Revoke invitation' }).click();
    await expect.poll(() => page.getByText('No pending invitations.').count()).toBe(1);
    expect(await page.getByRole('status').filter({ hasText: `The invitation of ${invitee} was revoked.` }).count()).toBe(1);
    const [stored] = await t.db.selectFrom('organization_invitations').select('status').where('environment_id', '=', env.id).where('email', '=', invitee).execute();
    expect(stored.status).toBe('REVOKED');

    // Removing: Escape cancels and removes no one; confirming removes the member.
    await page.getByRole('button', { name: `Remove ada-${tag}@example.com` }).click();
    const removeDialog = page.getByRole('dialog', { name: 'Remove this member?' });
    await expect.poll(() => removeDialog.isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => removeDialog.isVisible()).toBe(false);
    expect(await membersOf(organizationId)).toEqual([[ada.id, 'admin']]);
    await page.getByRole('button', { name: `Remove ada-${tag}@example.com` }).click();
    await removeDialog.getByRole('button', { name: 'Remove member' }).click();
    await expect.poll(() => page.getByText('This organization has no members yet.').count()).toBe(1);
    expect(await membersOf(organizationId)).toEqual([]);

    // Rename; a reload of the deep link lands on the same organization.
    await page.getByLabel('Name', { exact: true }).fill('Acme Industries');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => heading(page, 'Acme Industries').count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${organizationId}`)).json().name).toBe('Acme Industries');
    await page.reload();
    await expect.poll(() => heading(page, 'Acme Industries').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByRole('button', { name: 'Delete organization' }).click();
    const deleteDialog = page.getByRole('dialog', { name: 'Delete this organization?' });
    await expect.poll(() => deleteDialog.isVisible()).toBe(true);
    await deleteDialog.getByRole('button', { name: 'Delete organization' }).click();
    await expect.poll(() => heading(page, 'Organizations').count()).toBe(1);
    await expect.poll(() => page.getByText('This environment has no organizations yet.').count()).toBe(1);
    expect((await t.server(env).get(`/organizations/${organizationId}`)).statusCode).toBe(404);

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    await context.close();
  });

  it('searches organizations by name and pages through them by the cursor the URL keeps', async () => {
    const other = (await t.admin.post('/environments', { name: `${tag}-list` })).json() as TestEnv;
    for (let i = 0; i < 30; i++) {
      const res = await t.server(other).post('/organizations', { name: `Team ${String(i).padStart(2, '0')}` });
      expect(res.statusCode, res.body).toBe(201);
    }
    await t.server(other).post('/organizations', { name: 'Globex' });
    const { context, page } = await signedInPage(stage, `/environments/${other.id}/organizations`);
    const names = () => page.getByRole('table', { name: 'All organizations' }).locator('tbody tr td:first-child').allTextContents();
    await expect.poll(async () => (await names()).length).toBe(25);
    const first = await names();
    await page.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('cursor')).not.toBeNull();
    await expect.poll(async () => (await names()).length).toBe(6);
    expect((await names()).some((name) => first.includes(name))).toBe(false);
    await page.reload();
    await expect.poll(async () => (await names()).length).toBe(6);

    await page.getByLabel('Search by name').fill('glob');
    await page.keyboard.press('Enter');
    await expect.poll(() => names()).toEqual(['Globex']);
    expect(new URL(page.url()).searchParams.get('name')).toBe('glob');
    expect(new URL(page.url()).searchParams.get('cursor')).toBeNull();
    await page.getByLabel('Search by name').fill('initech');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByText('No organization\'s name contains “initech”.').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);

    await page.getByLabel('Search by name').fill('glob');
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Globex' }).click();
    await expect.poll(() => heading(page, 'Globex').count()).toBe(1);
    await context.close();
  });

  it("shows the server's refusal to demote the last owner, and an unmailed invitation's token once when no accept page exists", async () => {
    const quiet = (await t.admin.post('/environments', { name: `${tag}-quiet`, settings: { hostedPages: { enabled: false } } })).json() as TestEnv;
    const owner = (await t.server(quiet).post('/users', { email: `owner-${tag}@example.com` })).json();
    const org = (await t.server(quiet).post('/organizations', { name: 'Initech', createdBy: owner.id })).json();
    const { context, page } = await signedInPage(stage, `/environments/${quiet.id}/organizations/${org.id}`);
    await expect.poll(() => heading(page, 'Initech').count()).toBe(1);

    await page.getByLabel(`Role of owner-${tag}@example.com`, { exact: true }).selectOption('member');
    await page.getByRole('button', { name: `Change role of owner-${tag}@example.com` }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('last_owner');
    expect((await t.server(quiet).get(`/organizations/${org.id}/members`)).json().items.map((m: { role: string }) => m.role)).toEqual(['owner']);

    const inviteForm = page.getByRole('form', { name: 'Invite by email' });
    await inviteForm.getByLabel('Email', { exact: true }).fill(`bob-${tag}@example.com`);
    await inviteForm.getByRole('button', { name: 'Send invitation' }).click();
    const shown = page.getByRole('status').filter({ hasText: 'not mailed' });
    await expect.poll(() => shown.count()).toBe(1);
    expect(await shown.locator('code').textContent()).toMatch(/^orginv_[A-Za-z0-9_-]{43}$/);
    expect(await t.outbox(quiet, `bob-${tag}@example.com`)).toEqual([]);
    await expect.poll(() => page.getByRole('table', { name: 'Pending invitations' }).locator('tbody tr').count()).toBe(1);
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });

  it('shows a missing organization as the problem the Server API answered', async () => {
    const { context, page } = await signedInPage(stage, `/environments/${env.id}/organizations/0193e0a0-0000-7000-8000-00000000dead`);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('organization_not_found');
    expect(await accessibilityProblems(page)).toEqual([]);
    await context.close();
  });
});
