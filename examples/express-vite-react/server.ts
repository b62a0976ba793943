import { fileURLToPath } from 'node:url';
import { createSessionVerifier, expressSession, type VerifiedSession } from '@gatehouse/sdk';
import express from 'express';

export interface ApiOptions {
  /** The Gatehouse environment's frontend URL: the session JWTs' issuer. */
  frontendUrl: string;
  /** The built front end (`vite build`), served by the same app in production. */
  staticDir?: string;
}

/** The app's backend: `/api/me` answers who the session JWT says is calling; everything else is the front end. */
export function createApp({ frontendUrl, staticDir }: ApiOptions) {
  const verifier = createSessionVerifier({ frontendUrl });
  const app = express();
  app.get('/api/me', expressSession(verifier), (req, res) => {
    const { userId, sessionId, actorId } = (req as typeof req & { gatehouse: VerifiedSession }).gatehouse;
    res.json({ userId, sessionId, actorId });
  });
  if (staticDir) app.use(express.static(staticDir));
  return app;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const port = Number(process.env.PORT ?? 4000);
  const app = createApp({
    frontendUrl: process.env.GATEHOUSE_FRONTEND_URL ?? 'http://localhost:3000',
    staticDir: fileURLToPath(new URL('./dist/', import.meta.url)),
  });
  app.listen(port, () => console.log(`API on http://localhost:${port}`));
}
