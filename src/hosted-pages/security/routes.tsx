/** @jsxImportSource preact */
import type { PageKit, PagesApp } from '../kit.js';
import type { SecurityPages } from './service.js';

/** The security pages (contract §3e, /account). */
export function securityPages(_app: PagesApp, _kit: PageKit, _security: SecurityPages) {}
