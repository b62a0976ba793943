import { describe, expect, it } from 'vitest';
import { isAllowedRedirect, isSafeAbsoluteUrl, normalizeOrigin } from '../../src/environments/origins.js';

describe('normalizeOrigin', () => {
  it.each([
    ['https://app.example.com', 'https://app.example.com'],
    ['https://App.Example.COM', 'https://app.example.com'],
    ['HTTPS://app.example.com', 'https://app.example.com'],
    ['https://app.example.com:443', 'https://app.example.com'],
    ['http://localhost:80', 'http://localhost'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['https://app.example.com:8443', 'https://app.example.com:8443'],
    ['http://127.0.0.1:5173', 'http://127.0.0.1:5173'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    ['https://bücher.example', 'https://xn--bcher-kva.example'],
    ['capacitor://localhost', 'capacitor://localhost'],
    ['CAPACITOR://LocalHost', 'capacitor://localhost'],
    ['ionic://localhost', 'ionic://localhost'],
    ['tauri://localhost', 'tauri://localhost'],
    ['chrome-extension://abcdefghijklmnop', 'chrome-extension://abcdefghijklmnop'],
    ['moz-extension://0b4c1a9e-5f1c-4a7e-9d4b-3c2a1b0f9e8d', 'moz-extension://0b4c1a9e-5f1c-4a7e-9d4b-3c2a1b0f9e8d'],
  ])('normalises %s to %s', (input, expected) => {
    expect(normalizeOrigin(input)).toBe(expected);
  });

  it.each([
    ['a path', 'https://a.com/x'],
    ['a trailing slash', 'https://a.com/'],
    ['a trailing slash after a port', 'https://a.com:8443/'],
    ['a wildcard host', 'https://*.a.com'],
    ['a bare wildcard', '*'],
    ['a query', 'https://a.com?x=1'],
    ['an empty query', 'https://a.com?'],
    ['a fragment', 'https://a.com#top'],
    ['an empty fragment', 'https://a.com#'],
    ['a user name', 'https://u@a.com'],
    ['a user name and password', 'https://u:p@a.com'],
    ['an empty host', 'https://'],
    ['a port out of range', 'https://a.com:99999'],
    ['free text', 'not a url'],
    ['a host without a scheme', 'app.example.com'],
    ['a scheme-relative URL', '//app.example.com'],
    ['a special scheme without slashes', 'https:app.example.com'],
    ['backslashes instead of slashes', 'https:\\\\app.example.com'],
    ['the opaque origin "null"', 'null'],
    ['javascript:', 'javascript:alert(1)'],
    ['javascript: written as an authority', 'javascript://app.example.com'],
    ['data:', 'data:text/html,hi'],
    ['file:', 'file:///etc/passwd'],
    ['mailto:', 'mailto:a@b.com'],
    ['leading whitespace', ' https://a.com'],
    ['trailing whitespace', 'https://a.com '],
    ['an inner space', 'https://a .com'],
    ['an empty string', ''],
  ])('refuses %s (%s)', (_what, input) => {
    expect(normalizeOrigin(input)).toBeUndefined();
  });
});

describe('isAllowedRedirect', () => {
  const allowed = ['https://app.example.com', 'capacitor://localhost', 'http://localhost:3000'];

  it.each([
    'https://app.example.com',
    'https://app.example.com/',
    'https://app.example.com/after-impersonation?x=1#section',
    'https://APP.example.com/path',
    'https://app.example.com:443/path',
    'capacitor://localhost/home',
    'http://localhost:3000/callback',
  ])('allows %s, whose origin is in the list', (url) => {
    expect(isAllowedRedirect(url, allowed)).toBe(true);
  });

  it.each([
    ['a scheme-relative URL', '//evil.com'],
    ['a scheme-relative URL with a backslash', '/\\evil.com'],
    ['a relative path', '/dashboard'],
    ['credentials that look like the allowed host', 'https://app.example.com@evil.com'],
    ['credentials with a password', 'https://app.example.com:443@evil.com/'],
    ['an allowed host as a prefix of another', 'https://app.example.com.evil.com'],
    ['an allowed host as a suffix of another', 'https://evilapp.example.com'],
    ['the allowed host in the path', 'https://evil.com/https://app.example.com'],
    ['the allowed host in the query', 'https://evil.com?next=https://app.example.com'],
    ['the allowed host in the fragment', 'https://evil.com#@app.example.com'],
    ['another scheme', 'http://app.example.com'],
    ['another port', 'https://app.example.com:8443'],
    ['another port of localhost', 'http://localhost:3001/'],
    ['javascript:', 'javascript:alert(1)'],
    ['javascript: written as an authority', 'javascript://app.example.com/%0aalert(1)'],
    ['data:', 'data:text/html,<script>alert(1)</script>'],
    ['an unparsable value', 'not a url'],
    ['an empty string', ''],
    // The parser drops these or maps them to ASCII, so the URL judged is not the one a Location header would carry.
    ['a CR LF in the path', 'https://app.example.com/a\r\nSet-Cookie: x=1'],
    ['a CR LF in the host', 'https://app.example\r\n.com/'],
    ['a tab', 'https://app.example.com/a\tb'],
    ['a space', 'https://app.example.com/a b'],
    ['a NUL', 'https://app.example.com/\0'],
    ['a DEL', 'https://app.example.com/\x7f'],
    ['fullwidth letters in the host', 'https://ａｐｐ.example.com/'],
    ['fullwidth letters in the path', 'https://app.example.com/ｄａｓｈ'],
    ['a letter outside ASCII in the path', 'https://app.example.com/café'],
  ])('refuses %s (%s)', (_what, url) => {
    expect(isAllowedRedirect(url, allowed)).toBe(false);
  });

  it('refuses every URL when the list is empty', () => {
    expect(isAllowedRedirect('https://app.example.com/', [])).toBe(false);
  });

  it('refuses javascript: even when someone allowed it as an origin', () => {
    expect(isAllowedRedirect('javascript://app.example.com/%0aalert(1)', ['javascript://app.example.com'])).toBe(false);
  });
});

describe('isSafeAbsoluteUrl', () => {
  it.each(['https://app.example.com/sign-up', 'http://localhost:3000/accept', 'myapp://callback/impersonated'])('accepts %s', (url) => {
    expect(isSafeAbsoluteUrl(url)).toBe(true);
  });

  it('accepts a URL percent-encoded as a browser sends it', () => {
    expect(isSafeAbsoluteUrl('https://xn--bcher-kva.example/caf%C3%A9?q=a%20b')).toBe(true);
  });

  it.each(['javascript:alert(1)', 'javascript://x/%0aalert(1)', 'data:text/html,hi', 'file:///etc/passwd', '/relative', 'not a url', 'https://u:p@app.example.com/',
    'https://app.example.com/a\r\nb', 'https://app.example.com/a b', 'https://ａｐｐ.example.com/', 'https://bücher.example/'])(
    'refuses %s', (url) => {
      expect(isSafeAbsoluteUrl(url)).toBe(false);
    });
});
