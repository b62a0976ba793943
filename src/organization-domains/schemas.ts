import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../platform/http/common-schemas.js';

export const Enrollment = Type.Union([Type.Literal('none'), Type.Literal('suggest'), Type.Literal('automatic')], {
  description: 'What the verified domain does for users whose verified primary email is at it: `none`; `suggest` (the organization is '
    + 'suggested to them on the client plane and they may join); `automatic` (they become members with the default role when that email is '
    + 'verified: at sign-up, by a code, a provider or the Server API; users verified before get it as a suggestion). Only a verified domain enrolls.',
});
export type Enrollment = Static<typeof Enrollment>;

/** A domain of an organization, with the DNS record that verifies it. */
export const OrganizationDomain = Type.Object({
  id: Uuid, organizationId: Uuid,
  domain: Type.String({ description: 'Lower-case ASCII; an internationalized name in punycode (xn--).' }),
  enrollment: Enrollment,
  verified: Type.Boolean(),
  verifiedAt: Nullable(DateTime),
  verification: Type.Object({
    type: Type.Literal('dns_txt'),
    name: Type.String({ description: 'The TXT record to publish: `_gatehouse-verification.<domain>`.' }),
    value: Type.String({ description: 'The value it must hold.' }),
  }, { additionalProperties: false }),
  createdAt: DateTime, updatedAt: DateTime,
}, { title: 'OrganizationDomain', additionalProperties: false, description: "A domain of an organization; once verified it is the organization's in this environment." });
export type OrganizationDomain = Static<typeof OrganizationDomain>;

export const CreateDomainBody = Type.Object({
  domain: Type.String({ minLength: 1, maxLength: 300, description: 'A domain such as example.com; a URL or an internationalized name is normalized.' }),
  enrollment: Type.Optional(Enrollment),
}, { additionalProperties: false });
export type CreateDomainBody = Static<typeof CreateDomainBody>;

export const UpdateDomainBody = Type.Object({ enrollment: Enrollment }, { additionalProperties: false });
export type UpdateDomainBody = Static<typeof UpdateDomainBody>;

export const DomainParams = Type.Object({ organizationId: Uuid, domainId: Uuid }, { additionalProperties: false });

/** An organization the signed-in user may join, because it verified the domain of their verified email. */
export const OrganizationSuggestion = Type.Object({
  organization: Type.Object({ id: Uuid, name: Type.String(), slug: Nullable(Type.String()) }, { additionalProperties: false }),
  domain: Type.String(),
  enrollment: Enrollment,
}, { title: 'OrganizationSuggestion', additionalProperties: false, description: 'An organization that verified the domain of your verified primary email.' });
export type OrganizationSuggestion = Static<typeof OrganizationSuggestion>;
