import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@gatehouse/sdk';
import { serverApi } from '../api/gatehouse.js';
import { ProblemMessage } from '../ui/states.js';

type Connection = components['schemas']['SsoConnection'];
type Body = Parameters<ReturnType<typeof serverApi>['createSsoConnection']>[0];

/** The query key of an organization's SSO connections, which creating one refreshes. */
export const connectionsKey = (environmentId: string, organizationId: string) => ['organization-sso-connections', environmentId, organizationId];

const value = (data: FormData, name: string) => String(data.get(name) ?? '').trim();

/** What the form says, as the create body: only the fields filled in, of the chosen type. */
function bodyOf(organizationId: string, data: FormData): Body {
  const common = { organizationId, name: value(data, 'name'), enforced: data.get('enforced') === 'on' };
  if (value(data, 'type') === 'oidc') {
    const scopes = value(data, 'scopes').split(/[\s,]+/).filter(Boolean);
    return { ...common, type: 'oidc', issuer: value(data, 'issuer'), clientId: value(data, 'clientId'), clientSecret: value(data, 'clientSecret'), ...(scopes.length > 0 && { scopes }) };
  }
  const xml = value(data, 'idpMetadataXml');
  const url = value(data, 'idpMetadataUrl');
  return { ...common, type: 'saml', ...(xml && { idpMetadataXml: xml }), ...(url && { idpMetadataUrl: url }) };
}

/** A new connection: SAML from the IdP's metadata (pasted XML or its URL), or OpenID Connect from an issuer and a client. */
export function CreateSsoConnection({ organizationId, environmentId, onCreated }: { organizationId: string; environmentId: string; onCreated: (created: Connection) => void }) {
  const queryClient = useQueryClient();
  const [type, setType] = useState<'saml' | 'oidc'>('saml');
  const create = useMutation({
    mutationFn: (body: Body) => serverApi(environmentId).createSsoConnection(body),
    onSuccess: async (created) => {
      onCreated(created);
      await queryClient.invalidateQueries({ queryKey: connectionsKey(environmentId, organizationId) });
    },
  });
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    create.mutate(bodyOf(organizationId, new FormData(form)), { onSuccess: () => { form.reset(); setType('saml'); } });
  };
  return (
    <>
      <form onSubmit={onSubmit} className="provider-form stack" aria-labelledby="create-sso-connection">
        <h4 id="create-sso-connection" className="form-title">Create an SSO connection</h4>
        <label htmlFor="sso-type">Protocol</label>
        <select id="sso-type" name="type" value={type} onChange={(event) => setType(event.target.value as 'saml' | 'oidc')}>
          <option value="saml">SAML 2.0</option>
          <option value="oidc">OpenID Connect</option>
        </select>
        <label htmlFor="sso-name">Connection name</label>
        <input id="sso-name" name="name" required maxLength={256} autoComplete="off" aria-describedby="sso-name-hint" />
        <span id="sso-name-hint" className="help">The identity provider it is for, such as Okta or Microsoft Entra ID.</span>
        {type === 'saml' ? (
          <>
            <label htmlFor="sso-idp-metadata-xml">IdP metadata XML</label>
            <textarea id="sso-idp-metadata-xml" name="idpMetadataXml" className="xml" spellCheck={false} aria-describedby="sso-idp-metadata-hint" />
            <label htmlFor="sso-idp-metadata-url">IdP metadata URL</label>
            <input id="sso-idp-metadata-url" name="idpMetadataUrl" type="url" autoComplete="off" placeholder="https://idp.example.com/metadata" aria-describedby="sso-idp-metadata-hint" />
            <span id="sso-idp-metadata-hint" className="help">Paste the identity provider&apos;s metadata XML, or give its URL (read once, now).</span>
          </>
        ) : (
          <>
            <label htmlFor="sso-issuer">Issuer</label>
            <input id="sso-issuer" name="issuer" type="url" required autoComplete="off" placeholder="https://idp.example.com" />
            <label htmlFor="sso-client-id">Client ID</label>
            <input id="sso-client-id" name="clientId" required autoComplete="off" />
            <label htmlFor="sso-client-secret">Client secret</label>
            <input id="sso-client-secret" name="clientSecret" type="password" required autoComplete="off" aria-describedby="sso-client-secret-hint" />
            <span id="sso-client-secret-hint" className="help">Stored sealed; never shown again.</span>
            <label htmlFor="sso-scopes">Scopes (optional)</label>
            <input id="sso-scopes" name="scopes" autoComplete="off" placeholder="openid email profile" aria-describedby="sso-scopes-hint" />
            <span id="sso-scopes-hint" className="help">Separated by spaces; empty asks for openid, email and profile.</span>
          </>
        )}
        <div className="setting-check">
          <input id="sso-enforced" name="enforced" type="checkbox" aria-describedby="sso-enforced-hint" />
          <label htmlFor="sso-enforced">Enforce SSO</label>
          <p id="sso-enforced-hint" className="help">Users with an email at the organization&apos;s verified domains may then only sign in through this connection.</p>
        </div>
        <button type="submit" className="primary" disabled={create.isPending}>{create.isPending ? 'Creating…' : 'Create connection'}</button>
      </form>
      <ProblemMessage error={create.error} />
    </>
  );
}
