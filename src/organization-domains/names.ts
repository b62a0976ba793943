import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * Domain names as organizations claim them: one canonical form (lower-case ASCII, IDNA labels as punycode),
 * so `Exämple.COM`, `https://exämple.com/path` and `xn--exmple-cua.com` are one domain, and the refusals
 * that keep a claim meaningful. There is no full public-suffix list here: a claim must have a registrable
 * part (a dot, no bare TLD, none of the best-known multi-label suffixes), and it proves itself through DNS,
 * which a registry suffix's operator alone could publish.
 */

/** Multi-label suffixes under which anyone registers names (a small, common subset of the Public Suffix List). */
const PUBLIC_SUFFIXES = new Set([
  'co.uk', 'org.uk', 'me.uk', 'ltd.uk', 'plc.uk', 'ac.uk', 'gov.uk', 'net.uk', 'sch.uk',
  'com.au', 'net.au', 'org.au', 'edu.au', 'gov.au', 'co.nz', 'org.nz', 'net.nz', 'ac.nz', 'govt.nz',
  'co.jp', 'ne.jp', 'or.jp', 'ac.jp', 'go.jp', 'co.kr', 'or.kr', 'co.in', 'net.in', 'org.in', 'gov.in', 'ac.in',
  'com.br', 'net.br', 'org.br', 'gov.br', 'com.cn', 'net.cn', 'org.cn', 'gov.cn', 'com.hk', 'com.sg', 'com.tw', 'com.mx',
  'com.ar', 'com.tr', 'co.za', 'org.za', 'co.il', 'co.id', 'com.my', 'com.ph', 'com.vn', 'com.ua', 'com.pl', 'co.at', 'or.at',
  'github.io', 'gitlab.io', 'herokuapp.com', 'vercel.app', 'netlify.app', 'pages.dev', 'workers.dev', 'web.app', 'firebaseapp.com',
  'blogspot.com', 'appspot.com', 'azurewebsites.net', 'cloudfront.net', 'amazonaws.com',
]);

/**
 * Mailbox providers anyone can sign up at: a user's address there says nothing about an employer, so an
 * organization cannot claim them (as Clerk refuses them).
 */
const FREE_MAIL = new Set([
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'hotmail.co.uk', 'live.com', 'msn.com', 'yahoo.com', 'yahoo.co.uk',
  'yahoo.co.jp', 'ymail.com', 'rocketmail.com', 'aol.com', 'icloud.com', 'me.com', 'mac.com', 'proton.me', 'protonmail.com',
  'pm.me', 'gmx.com', 'gmx.net', 'gmx.de', 'web.de', 'mail.com', 'mail.ru', 'yandex.ru', 'yandex.com', 'zoho.com', 'qq.com',
  '163.com', '126.com', 'fastmail.com', 'hey.com', 'tutanota.com', 'tuta.io', 'laposte.net', 'orange.fr', 'free.fr', 'libero.it',
]);

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export type DomainRefusal = { reason: 'invalid' | 'public_suffix' | 'free_mail'; detail: string };

/** The canonical form of what a caller typed, or why it cannot be claimed. */
export function normalizeDomain(input: string): { domain: string } | DomainRefusal {
  const host = hostPart(input.trim().toLowerCase());
  const ascii = host && !isIP(host.replace(/^\[|\]$/g, '')) ? domainToASCII(host.replace(/\.$/, '')) : '';
  if (!ascii || ascii.length > 253 || !ascii.split('.').every((label) => LABEL.test(label))) {
    return { reason: 'invalid', detail: `"${input}" is not a domain name such as example.com.` };
  }
  if (!ascii.includes('.') || PUBLIC_SUFFIXES.has(ascii)) {
    return { reason: 'public_suffix', detail: `${ascii} is a public suffix, under which anyone registers names: claim your own domain under it.` };
  }
  if (FREE_MAIL.has(ascii)) {
    return { reason: 'free_mail', detail: `${ascii} is a public email provider: its addresses do not belong to one organization.` };
  }
  return { domain: ascii };
}

/** The host of a URL or of `host[:port][/path]`; empty when there is none. */
function hostPart(value: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//.test(value) ? value : `http://${value}`;
  if (!URL.canParse(withScheme)) return '';
  // URL has already turned Unicode labels into punycode and dropped a port, path and credentials.
  return new URL(withScheme).hostname;
}

/** The domain of an email address (already lower-case, as users store it). */
export const emailDomain = (email: string) => email.slice(email.lastIndexOf('@') + 1);

/** The name of the TXT record that proves a domain. */
export const verificationRecordName = (domain: string) => `_gatehouse-verification.${domain}`;
