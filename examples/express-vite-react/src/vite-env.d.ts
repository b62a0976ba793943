/// <reference types="vite/client" />

interface ImportMetaEnv {
  /** The Gatehouse environment's frontend URL (default http://localhost:3000, the development environment). */
  readonly VITE_GATEHOUSE_FRONTEND_URL?: string;
}
