import { Type } from 'typebox';
import { Uuid } from '../../platform/http/common-schemas.js';
import { PageQuery } from '../schemas.js';
import { REAUTH_RETURNS } from './views.js';

/** An account tab's query: what every page carries, and the notice of the step that led here (a catalogue key's last part). */
export const AccountQuery = Type.Object({ ...PageQuery.properties, notice: Type.Optional(Type.String({ maxLength: 40 })) });

export const IdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

// Form posts: strings as the browser sends them, length-bounded; the services check the rest as for the API.
const Csrf = Type.String({ maxLength: 100 });

export const CsrfForm = Type.Object({ csrf: Csrf }, { additionalProperties: false });

export const ProfileForm = Type.Object({
  csrf: Csrf, firstName: Type.String({ maxLength: 200 }), lastName: Type.String({ maxLength: 200 }),
  locale: Type.Union([Type.Literal(''), Type.Literal('en'), Type.Literal('da')]),
}, { additionalProperties: false });

export const AddEmailForm = Type.Object({ csrf: Csrf, email: Type.String({ minLength: 1, maxLength: 320 }) }, { additionalProperties: false });

export const CodeForm = Type.Object({ csrf: Csrf, code: Type.String({ minLength: 1, maxLength: 20 }) }, { additionalProperties: false });

export const DataRequestForm = Type.Object({ csrf: Csrf, type: Type.Union([Type.Literal('export'), Type.Literal('erasure')]) }, { additionalProperties: false });

export const ReauthenticateForm = Type.Object({
  csrf: Csrf, password: Type.String({ minLength: 1, maxLength: 1024 }), then: Type.Union(REAUTH_RETURNS.map((path) => Type.Literal(path))),
}, { additionalProperties: false });

/** The deletion's confirmation: the box must be ticked (the browser insists; without it the page asks again). */
export const DeleteAccountForm = Type.Object({ csrf: Csrf, confirm: Type.Optional(Type.Literal('true')) }, { additionalProperties: false });
