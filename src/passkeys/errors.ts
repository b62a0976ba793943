import { ProblemError } from '../platform/http/problem.js';

export const passkeysDisabled = () => new ProblemError(403, 'passkeys_disabled', 'Passkeys are turned off in this environment (setting passkeys.enabled).');
export const passkeyNotFound = () => new ProblemError(404, 'resource_not_found', 'No passkey with this id for this user.');
export const passkeyAlreadyRegistered = () => new ProblemError(409, 'passkey_already_registered', 'This passkey is registered already.');
export const invalidPasskeyChallenge = () => new ProblemError(400, 'invalid_passkey_challenge',
  'The response answers no live challenge of this environment (unknown, expired after 5 minutes, or used already): ask for new options.');
// One answer for every failed check (signature, origin, RP ID, counter, unknown credential), so a refusal tells an attacker nothing.
export const invalidPasskey = () => new ProblemError(400, 'invalid_passkey', 'The passkey response could not be verified.');
export const requiredByPolicy = () => new ProblemError(409, 'mfa_required_by_policy',
  'This environment requires a second factor or passkey: the last one cannot be removed (an administrator can reset them through the Server API).');
