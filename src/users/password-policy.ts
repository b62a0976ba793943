import { readFileSync } from 'node:fs';

// The 10,000 most common passwords of 8 or more characters (from zxcvbn-ts's list, MIT).
const COMMON = new Set(
  readFileSync(new URL('./common-passwords.txt', import.meta.url), 'utf8').split('\n').filter(Boolean),
);

export interface PasswordPolicy { minLength: number; maxLength: number }

/**
 * NIST 800-63B: length only, no composition rules, checked before any hashing. Refuses the most
 * common passwords, the user's own email (or its local part) and the product name. Returns the
 * reason a password is refused, or undefined when it is acceptable.
 */
export function passwordProblem(password: string, policy: PasswordPolicy, email?: string | null): string | undefined {
  // Count code points, not UTF-16 units, and bail out on huge input before doing anything else.
  if (password.length > policy.maxLength * 2) return `The password must be at most ${policy.maxLength} characters.`;
  const length = [...password].length;
  if (length < policy.minLength) return `The password must be at least ${policy.minLength} characters.`;
  if (length > policy.maxLength) return `The password must be at most ${policy.maxLength} characters.`;
  const lowered = password.toLowerCase();
  if (COMMON.has(lowered)) return 'This password is too common; choose another.';
  if (lowered.includes('gatehouse')) return 'The password must not contain the product name.';
  if (email) {
    const address = email.toLowerCase();
    if (lowered === address || lowered === address.split('@')[0]) return 'The password must not be your email address.';
  }
  return undefined;
}
