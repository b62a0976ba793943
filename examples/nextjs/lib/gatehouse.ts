import { gatehouseNext } from '@gatehouse/sdk/next';

/**
 * Verifies the session JWT (bearer header, or the cookie the provider's cookie mode keeps) offline against
 * the environment's JWKS. GATEHOUSE_FRONTEND_URL is read at run time, on the first request.
 */
export const gatehouse = gatehouseNext({ publicRoutes: ['/'], signInUrl: '/sign-in' });
