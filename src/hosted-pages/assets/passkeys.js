// The hosted pages' one script: passkeys, which need WebAuthn and so JavaScript. Served by Gatehouse under
// `script-src 'self'` on the pages that offer passkeys; without it (or without WebAuthn's JSON helpers) the
// passkey forms stay hidden and the page works as before. It calls the client plane on the same host, so the
// cookie and the Origin check are the API's own.
(() => {
  const credentials = window.PublicKeyCredential;
  if (!credentials || typeof credentials.parseCreationOptionsFromJSON !== 'function' || typeof credentials.parseRequestOptionsFromJSON !== 'function') return;
  for (const element of document.querySelectorAll('[data-passkey]')) element.hidden = false;
  for (const element of document.querySelectorAll('[data-passkey-fallback]')) element.hidden = true;

  /** A JSON POST; answers whether it succeeded and the parsed body (a problem's `properties.code`, or the page's `error`). */
  async function post(path, body) {
    const response = await fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const data = await response.json().catch(() => ({}));
    return { ok: response.ok, data };
  }

  function showError(form, message) {
    const alert = form.querySelector('[data-passkey-error]');
    alert.textContent = message || form.dataset.failed;
    alert.hidden = false;
  }

  function busy(form, on) {
    for (const button of form.querySelectorAll('button')) button.disabled = on;
  }

  /** /sign-in: the browser's passkey for this site, checked by POST /sign-in/passkey, which sets the cookie and names the landing place. */
  async function signIn(form) {
    const options = await post('/_svc/auth/passkey/options', {});
    if (!options.ok) return showError(form);
    const credential = await navigator.credentials.get({ publicKey: credentials.parseRequestOptionsFromJSON(options.data) });
    const answer = await post(form.action, { csrf: form.elements.csrf.value, response: credential.toJSON() });
    if (answer.ok && answer.data.location) return window.location.assign(answer.data.location);
    return showError(form, answer.data.error);
  }

  /** /account/security: a new passkey; the tab is then loaded again with the outcome (its message comes from the page's catalogue). */
  async function register(form) {
    const back = new URL(form.dataset.back, window.location.href);
    const refused = (data) => {
      back.searchParams.set('problem', (data.properties && data.properties.code) || 'generic');
      window.location.assign(back.href);
    };
    const options = await post('/_svc/me/passkeys/options', {});
    if (!options.ok) return refused(options.data);
    const credential = await navigator.credentials.create({ publicKey: credentials.parseCreationOptionsFromJSON(options.data) });
    const name = form.elements.namedItem('name').value.trim();
    const added = await post('/_svc/me/passkeys', { response: credential.toJSON(), ...(name && { name }) });
    if (!added.ok) return refused(added.data);
    back.searchParams.delete('problem');
    back.searchParams.set('done', 'passkey_added');
    return window.location.assign(back.href);
  }

  const ceremonies = { 'sign-in': signIn, register };
  for (const form of document.querySelectorAll('form[data-passkey]')) {
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      busy(form, true);
      try {
        await ceremonies[form.dataset.passkey](form);
      } catch {
        // The person closed the browser's dialog, or the authenticator refused: say so and let them try again.
        showError(form);
      } finally {
        busy(form, false);
      }
    });
  }
})();
