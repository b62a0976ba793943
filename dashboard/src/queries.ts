import { adminApi, operatorSession } from './api/gatehouse.js';

/** The signed-in operator (null when signed out), shared by the guard of every screen and the header. */
export const operatorQuery = { queryKey: ['operator'], queryFn: operatorSession.current, staleTime: 60_000 } as const;

/** Every environment, for the picker and the header's name of the current one. */
export const environmentsQuery = { queryKey: ['environments'], queryFn: async () => (await adminApi.listEnvironments()).items } as const;
