import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// In development the page is served by Vite (http://localhost:5173, allowed by Gatehouse's development
// environment) and its /api calls go to the Express app.
export default defineConfig({
  plugins: [react()],
  server: { proxy: { '/api': `http://localhost:${process.env.PORT ?? 4000}` } },
});
