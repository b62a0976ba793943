import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { givenCast, minted, redeem } from '../impersonation/support.js';
import { pageBrowser } from './support.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const bannerOf = (html: string) => /<p class="impersonation" role="status">([^<]*)<\/p>/.exec(html)?.[1];

describe('the impersonation banner', () => {
  it('names the operator on every page an impersonated session opens, in the page\'s language', async () => {
    const cast = await givenCast(t);
    await t.server(cast.env).patch(`/users/${cast.actor.id}`, { name: 'Olga Operator' });
    const { token } = await minted(t, cast);
    const session = (await redeem(t, cast.env, token)).json().sessionToken as string;
    const browser = pageBrowser(t, cast.env);
    browser.jar.set('__session', session);

    expect(bannerOf((await browser.get('/sign-out')).body)).toBe('Impersonation: Olga Operator is signed in as this user. Everything done here is recorded in their name.');
    expect(bannerOf((await browser.get('/signed-in?locale=da')).body))
      .toBe('Supportlogin: Olga Operator er logget ind som denne bruger. Alt, der gøres her, registreres i vedkommendes navn.');
  });

  it('names an operator without a name by their email, and escapes what the name carries', async () => {
    const cast = await givenCast(t);
    const { token } = await minted(t, cast);
    const session = (await redeem(t, cast.env, token)).json().sessionToken as string;
    const browser = pageBrowser(t, cast.env);
    browser.jar.set('__session', session);
    expect(bannerOf((await browser.get('/sign-out')).body)).toContain(`Impersonation: ${cast.actor.email} is signed in`);

    await t.server(cast.env).patch(`/users/${cast.actor.id}`, { name: '<b>Eve</b>' });
    expect((await browser.get('/sign-out')).body).toContain('Impersonation: &lt;b>Eve&lt;/b> is signed in');
  });

  it('is not shown to the user\'s own session, nor without one', async () => {
    const cast = await givenCast(t);
    const own = await t.given.session(cast.env, cast.target);
    const browser = pageBrowser(t, cast.env);
    expect((await browser.get('/sign-out')).body).not.toContain('class="impersonation"');
    browser.jar.set('__session', own.token);
    expect((await browser.get('/sign-out')).body).not.toContain('class="impersonation"');
  });
});
