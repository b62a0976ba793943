// Next.js 16 calls this file proxy.ts; on Next.js 14 and 15 name it middleware.ts (same content).
import { gatehouse } from './lib/gatehouse';

export default gatehouse.middleware;

export const config = {
  // Every page and route handler, not Next's own assets.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
