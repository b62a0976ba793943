import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A WebAuthn authenticator in software (ES256, attestation "none"), for tests and the bench where no
 * browser runs: it answers creation options with PublicKeyCredential.toJSON()'s shape, and request options
 * with an assertion signed by its key. Browsers are tested with Chromium's virtual authenticator.
 */

const FLAGS = { up: 0x01, uv: 0x04, be: 0x08, bs: 0x10, at: 0x40 };

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();
const b64url = (data: Uint8Array) => Buffer.from(data).toString('base64url');

export interface SoftwareCredential {
  id: Buffer; rpId: string; userHandle: string; privateKey: KeyObject; publicKeyCose: Uint8Array; counter: number; synced: boolean;
}

export interface AuthenticatorOptions {
  /** Backup eligible and backed up (a synced passkey): the session's amr says swk, else hwk. */
  synced?: boolean;
  /** Whether the user was verified (PIN, biometric); default true. */
  userVerified?: boolean;
  /** Counter steps per signature; 0 is an authenticator without a counter. */
  counterStep?: number;
}

function coseKeyOf(publicKey: KeyObject): Uint8Array {
  const jwk = publicKey.export({ format: 'jwk' });
  return isoCBOR.encode(new Map<number, number | Uint8Array>([
    [1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')],
  ]));
}

const flagsOf = (options: AuthenticatorOptions, extra = 0) =>
  FLAGS.up | (options.userVerified === false ? 0 : FLAGS.uv) | (options.synced ? FLAGS.be | FLAGS.bs : 0) | extra;

const counterBytes = (counter: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(counter); return b; };

const clientData = (type: string, challenge: string, origin: string) =>
  Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));

export function createSoftwareAuthenticator(options: AuthenticatorOptions = {}) {
  const credentials: SoftwareCredential[] = [];
  const newCredential = (rpId: string, userHandle: string) => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const credential = { id: randomBytes(32), rpId, userHandle, privateKey, publicKeyCose: coseKeyOf(publicKey), counter: 0, synced: options.synced ?? false };
    credentials.push(credential);
    return credential;
  };
  const step = options.counterStep ?? 1;
  return {
    credentials,
    /**
     * navigator.credentials.create() with these creation options, from `origin`: a new key, or `again` an
     * existing one (as an authenticator ignoring excludeCredentials would).
     */
    create(creation: { challenge: string; rp: { id: string }; user: { id: string } }, origin: string, again?: SoftwareCredential) {
      const credential = again ?? newCredential(creation.rp.id, creation.user.id);
      const idLength = Buffer.alloc(2);
      idLength.writeUInt16BE(credential.id.length);
      const authData = Buffer.concat([
        sha256(credential.rpId), Buffer.from([flagsOf(options, FLAGS.at)]), counterBytes(credential.counter),
        Buffer.alloc(16), idLength, credential.id, credential.publicKeyCose,
      ]);
      const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
      return {
        id: b64url(credential.id), rawId: b64url(credential.id), type: 'public-key' as const, clientExtensionResults: {},
        response: {
          clientDataJSON: b64url(clientData('webauthn.create', creation.challenge, origin)), attestationObject: b64url(attestationObject),
          transports: ['internal'],
        },
      };
    },
    /** navigator.credentials.get() with these request options, from `origin`, signed by `credential` (default: the latest one). */
    get(request: { challenge: string; rpId: string }, origin: string, credential = credentials.at(-1)!) {
      credential.counter += step;
      const authData = Buffer.concat([sha256(request.rpId), Buffer.from([flagsOf(options)]), counterBytes(credential.counter)]);
      const clientDataJSON = clientData('webauthn.get', request.challenge, origin);
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
      return {
        id: b64url(credential.id), rawId: b64url(credential.id), type: 'public-key' as const, clientExtensionResults: {},
        response: {
          clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature), userHandle: credential.userHandle,
        },
      };
    },
  };
}
export type SoftwareAuthenticator = ReturnType<typeof createSoftwareAuthenticator>;
