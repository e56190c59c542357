import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// Served by the gateway at /dashboard (src/dashboard/pages.ts); every file is bundled, nothing from a CDN.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  esbuild: { jsx: 'automatic' },
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  logLevel: 'warn',
});
