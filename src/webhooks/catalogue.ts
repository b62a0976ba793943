/**
 * Every webhook event type, what makes it, and an example payload (GET /webhook-event-types). The
 * events themselves are written by a trigger on the service's own audit trail (migration 0028, table
 * webhook_event_sources), in the transaction of the change: test/webhooks/catalogue.test.ts keeps that
 * table and this list the same.
 */
export const WEBHOOK_EVENT_TYPES = {
  'user.created': 'A user was created: through the Server API, a sign-up, an invitation or a first OAuth sign-in.',
  'user.updated': "A user's profile, metadata or primary email address changed.",
  'user.deleted': 'A user was deleted.',
  'user.banned': 'A user was banned; their sessions are revoked with it.',
  'user.unbanned': 'A user was unbanned.',
  'email.verified': 'A user proved an email address: the primary one, or another they added.',
  'session.created': 'A user signed in (any method), starting a session.',
  'session.revoked': 'One session, or all of a user\'s sessions, were revoked.',
  'organization.created': 'An organization was created.',
  'organization.updated': "An organization's name, slug or metadata changed.",
  'organization.deleted': 'An organization was deleted.',
  'organization_membership.created': 'A user joined an organization.',
  'organization_membership.updated': "A member's role or metadata changed.",
  'organization_membership.deleted': 'A member left or was removed from an organization.',
  'invitation.created': 'An invitation to the environment was sent.',
  'invitation.accepted': 'An invitation to the environment was accepted.',
  'invitation.revoked': 'An invitation to the environment was revoked.',
  'organization_invitation.created': 'An invitation to an organization was sent.',
  'organization_invitation.accepted': 'An invitation to an organization was accepted.',
  'organization_invitation.revoked': 'An invitation to an organization was revoked.',
  'organization_domain.created': 'A domain was added to an organization (unverified).',
  'organization_domain.verified': "An organization's domain was verified by its DNS TXT record.",
  'organization_domain.updated': "An organization's domain changed its enrollment mode.",
  'organization_domain.deleted': 'A domain was removed from an organization.',
  'sso_connection.created': 'An SSO connection (SAML or OpenID Connect) was added to an organization.',
  'sso_connection.updated': "An organization's SSO connection changed (its IdP, enabled, enforced or role mapping).",
  'sso_connection.deleted': "An organization's SSO connection was deleted.",
  'scim_directory.created': 'A SCIM directory was added to an organization.',
  'scim_directory.updated': "A SCIM directory's name or group-to-role mapping changed.",
  'scim_directory.token_rotated': "A SCIM directory's bearer token was replaced (the old one stopped working).",
  'scim_directory.deleted': 'A SCIM directory was deleted (the users it provisioned stay).',
  'factor.added': 'A user added a second factor (TOTP, backup codes) or a passkey.',
  'factor.removed': "A user's second factor or passkey was removed, or an operator reset their factors.",
  'impersonation.redeemed': 'An impersonation token was redeemed: a session acting as the user started.',
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_TYPES;
export const WEBHOOK_EVENT_TYPE_NAMES = Object.keys(WEBHOOK_EVENT_TYPES) as WebhookEventType[];

const EXAMPLE_USER = '01964c4e-8a4b-7c3e-9a51-2f4d8b6e1a01';
const EXAMPLE_ACTOR = { type: 'user', id: EXAMPLE_USER, impersonatorId: null };
const example = {
  user: { type: 'user', id: EXAMPLE_USER },
  session: { type: 'session', id: '01964c4e-9b11-7a20-8f3e-6c1d2e3f4a05' },
  organization: { type: 'organization', id: '01964c4f-0c22-7b31-9e4f-7d2e3f4a5b06' },
  invitation: { type: 'invitation', id: '01964c4f-2e44-7d53-9a61-9f4a5b6c7d08' },
  organizationInvitation: { type: 'organization_invitation', id: '01964c4f-3f55-7e64-8b72-a05b6c7d8e09' },
  organizationDomain: { type: 'organization_domain', id: '01964c4f-6c88-7197-9ea5-d38e9f0a1b2c' },
  ssoConnection: { type: 'sso_connection', id: '01964c4f-7d99-72a8-8fb6-e49f0a1b2c3d' },
  scimDirectory: { type: 'scim_directory', id: '01964c4f-8eaa-73b9-90c7-f5a01b2c3d4e' },
  impersonation: { type: 'impersonation', id: '01964c4f-4a66-7f75-9c83-b16c7d8e9f0a' },
};

/** What an event names, in the order its audit event does (`data.object` and `data.id` are the first). */
function exampleTargets(type: WebhookEventType): { type: string; id: string }[] {
  const [area] = type.split('.');
  if (type === 'session.created') return [example.user, example.session];
  if (type === 'session.revoked') return [example.session, example.user];
  if (type === 'impersonation.redeemed') return [example.user, example.session, example.impersonation];
  if (area === 'organization') return [example.organization];
  if (area === 'organization_membership') return [example.organization, example.user];
  if (area === 'invitation') return [example.invitation];
  if (area === 'organization_invitation') return [example.organization, example.organizationInvitation];
  if (area === 'organization_domain') return [example.organization, example.organizationDomain];
  if (area === 'sso_connection') return [example.organization, example.ssoConnection];
  if (area === 'scim_directory') return [example.scimDirectory, example.organization];
  return [example.user];
}

/** A payload as a receiver gets it: `{type, timestamp, data}`. */
export function examplePayload(type: WebhookEventType) {
  const targets = exampleTargets(type);
  return {
    type,
    timestamp: '2026-11-27T09:30:00.000Z',
    data: {
      object: targets[0]!.type, id: targets[0]!.id, targets, actor: EXAMPLE_ACTOR, metadata: {},
      auditEventId: '01964c4f-5b77-7086-8d94-c27d8e9f0a1b',
    },
  };
}
