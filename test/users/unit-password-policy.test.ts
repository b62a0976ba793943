import { describe, expect, it } from 'vitest';
import { passwordProblem } from '../../src/users/password-policy.js';

const policy = { minLength: 8, maxLength: 256 };

describe('passwordProblem', () => {
  it('accepts a long passphrase with spaces and no composition rules', () => {
    expect(passwordProblem('correct horse battery staple', policy)).toBeUndefined();
    expect(passwordProblem('alllowercaseletters', policy)).toBeUndefined();
  });

  it('accepts exactly the minimum and the maximum length and refuses one character outside either', () => {
    expect(passwordProblem('k7#qv9zm', policy)).toBeUndefined();
    expect(passwordProblem('k7#qv9z', policy)).toBe('The password must be at least 8 characters.');
    expect(passwordProblem('k'.repeat(200) + 'q'.repeat(56), policy)).toBeUndefined();
    expect(passwordProblem('k'.repeat(200) + 'q'.repeat(57), policy)).toBe('The password must be at most 256 characters.');
  });

  it('counts characters (code points), not UTF-16 units', () => {
    // Four emoji are eight UTF-16 units but only four characters.
    expect(passwordProblem('😀😁😂🤣', policy)).toBe('The password must be at least 8 characters.');
    expect(passwordProblem('😀😁😂🤣😃😄😅😆', policy)).toBeUndefined();
    // 256 emoji are 512 UTF-16 units: still within a 256-character limit.
    expect(passwordProblem('😀'.repeat(256), policy)).toBeUndefined();
    expect(passwordProblem('😀'.repeat(257), policy)).toBe('The password must be at most 256 characters.');
  });

  it('refuses a ten-megabyte password before looking at its characters', () => {
    // Splitting it into code points alone takes well over 100 ms; the length check takes microseconds. Read
    // character by character, this one throws: proof that it is refused before, where a stopwatch (under
    // 100 ms) also measured whatever a busy machine did meanwhile (a pause of this process, a major GC).
    const huge = Object.assign(new String('x'.repeat(10_000_000)), {
      [Symbol.iterator]: () => { throw new Error('the password was read character by character'); },
    }) as unknown as string;
    expect(passwordProblem(huge, policy)).toBe('The password must be at most 256 characters.');
  });

  it('follows the environment policy rather than fixed numbers', () => {
    const strict = { minLength: 15, maxLength: 20 };
    expect(passwordProblem('k7#qv9zm-long', strict)).toBe('The password must be at least 15 characters.');
    expect(passwordProblem('k7#qv9zm-longer-one', strict)).toBeUndefined();
    expect(passwordProblem('k7#qv9zm-longer-one-too', strict)).toBe('The password must be at most 20 characters.');
  });

  it.each(['password', 'password123', 'iloveyou1', 'PassWord123', 'ILOVEYOU1'])(
    'refuses the common password %s, whatever its letter case', (password) => {
      expect(passwordProblem(password, policy)).toBe('This password is too common; choose another.');
    });

  it('refuses a password containing the product name', () => {
    expect(passwordProblem('my-GateHouse-login', policy)).toBe('The password must not contain the product name.');
  });

  it("refuses the user's own email and its local part, whatever the letter case", () => {
    const email = 'Ada.Lovelace@Example.com';
    expect(passwordProblem('ada.lovelace@example.com', policy, email)).toBe('The password must not be your email address.');
    expect(passwordProblem('ADA.LOVELACE@EXAMPLE.COM', policy, email)).toBe('The password must not be your email address.');
    expect(passwordProblem('Ada.Lovelace', policy, email)).toBe('The password must not be your email address.');
    expect(passwordProblem('ada.lovelace@example.com', policy, 'someone.else@example.com')).toBeUndefined();
  });

  it('does not compare against an email when the user has none', () => {
    expect(passwordProblem('ada.lovelace@example.com', policy, null)).toBeUndefined();
    expect(passwordProblem('ada.lovelace@example.com', policy)).toBeUndefined();
  });
});
