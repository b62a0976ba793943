import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

// Built by the root `prepare` script (npm ci) into dist/, which Gatehouse serves at /dashboard
// (src/dashboard/routes.ts). `npm run dev -w @gatehouse/dashboard` serves it on :5173, its /api calls
// going to a Gatehouse on :3000 (the operator cookie then belongs to :5173, the origin the browser sees).
export default defineConfig({
  base: '/dashboard/',
  plugins: [react()],
  // @gatehouse/sdk from its sources (the `source` condition of its exports), as the root tsconfig reads it.
  resolve: { conditions: ['source', ...defaultClientConditions] },
  build: { outDir: 'dist', emptyOutDir: true, modulePreload: { polyfill: false }, assetsInlineLimit: 0 },
  server: { proxy: { '/api': 'http://localhost:3000' } },
});
