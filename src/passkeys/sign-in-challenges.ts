import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A passkey sign-in challenge that carries its own state: `nonce | expiry (ms) | restricted | tag`, the tag
 * an HMAC over the environment, those fields and the account an email named (none when it named none or
 * an unknown one). An options call stores nothing, so anonymous callers cannot grow the database; the
 * sign-in that answers it marks it used. The account is only inside the tag, so the challenge (always
 * the same length) never tells whether an email has an account, and is checked once the passkey says
 * whose it is.
 */
const NONCE_BYTES = 16;
const TAG_BYTES = 16;
const EXPIRY_AT = NONCE_BYTES;
const RESTRICTED_AT = EXPIRY_AT + 8;
const TAG_AT = RESTRICTED_AT + 1;
const CHALLENGE_BYTES = TAG_AT + TAG_BYTES;

export interface SignedChallenge {
  expiresAt: Date;
  /** Bound to the account an email named: only that account's passkey may answer it. */
  restricted: boolean;
  /** Whether the tag is this environment's for this account (null: none named). */
  signedFor(environmentId: string, userId: string | null): boolean;
}

export function signInChallenges(encryptionKey: Buffer) {
  // A key of its own, derived from the sealing key: a challenge never doubles as anything else signed.
  const key = createHmac('sha256', encryptionKey).update('gatehouse passkey sign-in challenges').digest();
  const tagOf = (environmentId: string, fields: Buffer, userId: string | null) =>
    createHmac('sha256', key).update(`${environmentId}.${userId ?? ''}.`).update(fields).digest().subarray(0, TAG_BYTES);

  return {
    /** A new challenge's bytes (the library writes them base64url into the options). */
    issue(environmentId: string, userId: string | null, restricted: boolean, expiresAt: Date): Uint8Array<ArrayBuffer> {
      const fields = Buffer.alloc(TAG_AT);
      randomBytes(NONCE_BYTES).copy(fields);
      fields.writeBigUInt64BE(BigInt(expiresAt.getTime()), EXPIRY_AT);
      fields[RESTRICTED_AT] = restricted ? 1 : 0;
      return new Uint8Array(Buffer.concat([fields, tagOf(environmentId, fields, userId)]));
    },

    /** A challenge of this shape, to check; undefined for any other (one the version before stored). */
    read(challenge: string): SignedChallenge | undefined {
      const bytes = Buffer.from(challenge, 'base64url');
      if (bytes.length !== CHALLENGE_BYTES) return undefined;
      const fields = bytes.subarray(0, TAG_AT);
      return {
        expiresAt: new Date(Number(fields.readBigUInt64BE(EXPIRY_AT))),
        restricted: fields[RESTRICTED_AT] === 1,
        signedFor: (environmentId, userId) => timingSafeEqual(tagOf(environmentId, fields, userId), bytes.subarray(TAG_AT)),
      };
    },
  };
}
