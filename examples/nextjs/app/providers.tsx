'use client';
import { GatehouseProvider } from '@gatehouse/sdk/react';
import type { ReactNode } from 'react';

/** Cookie mode: the provider keeps the session JWT in a first-party cookie, so server rendering sees the session. */
export function Providers({ children }: { children: ReactNode }) {
  const frontendUrl = process.env.NEXT_PUBLIC_GATEHOUSE_FRONTEND_URL ?? 'http://localhost:3000';
  return <GatehouseProvider frontendUrl={frontendUrl} cookie>{children}</GatehouseProvider>;
}
