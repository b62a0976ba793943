/** @jsxImportSource preact */
import type { PageKit, PagesApp } from '../kit.js';
import type { AccountPages } from './service.js';

/** The account pages (contract §3e, /account). */
export function accountPages(_app: PagesApp, _kit: PageKit, _account: AccountPages) {}
