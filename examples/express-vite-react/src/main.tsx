import { GatehouseProvider } from '@gatehouse/sdk/react';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.js';

const frontendUrl = import.meta.env.VITE_GATEHOUSE_FRONTEND_URL ?? 'http://localhost:3000';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <GatehouseProvider frontendUrl={frontendUrl}>
      <App />
    </GatehouseProvider>
  </StrictMode>,
);
