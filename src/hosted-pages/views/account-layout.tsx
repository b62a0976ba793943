/** @jsxImportSource preact */
import type { ComponentChildren } from 'preact';
import { Layout, type PageContext } from './layout.js';

/** The account's tabs: one page per tab, each its own URL so a link or a form's answer can open it. */
export const ACCOUNT_TABS = [
  { path: '/account', label: 'account.tab.profile' },
  { path: '/account/security', label: 'account.tab.security' },
  { path: '/account/data', label: 'account.tab.data' },
] as const;
export type AccountTab = (typeof ACCOUNT_TABS)[number]['path'];

/** A page of the account: the tabs, then the tab's sections. */
export function AccountLayout({ ctx, current, title, children, script = false }: { ctx: PageContext; current: AccountTab; title: string; children: ComponentChildren; script?: boolean }) {
  return (
    <Layout ctx={ctx} title={title} wide script={script}>
      <nav class="tabs" aria-label={ctx.t('account.tabs')}>
        <ul>
          {ACCOUNT_TABS.map((tab) => (
            <li key={tab.path}>
              <a href={`${tab.path}${ctx.carried}`} aria-current={tab.path === current ? 'page' : undefined}>{ctx.t(tab.label)}</a>
            </li>
          ))}
        </ul>
      </nav>
      {children}
    </Layout>
  );
}
