import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { RouterProvider } from '@tanstack/react-router';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { GatehouseError } from './api/gatehouse.js';
import { createDashboardRouter } from './router.js';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A problem the server stated (404, 403, ...) will not change on a retry; a dropped connection may.
      retry: (failures, error) => failures < 2 && !(error instanceof GatehouseError && error.status >= 400 && error.status < 500),
      staleTime: 10_000,
    },
  },
});
const router = createDashboardRouter(queryClient);

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  </StrictMode>,
);
