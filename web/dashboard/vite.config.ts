import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
/** The SDK as the package it is (`@parley/sdk`), built from its sources; the same map as tsconfig.json's paths. */
const sdk = (file: string) => fileURLToPath(new URL(`../../sdk/src/${file}`, import.meta.url));

/**
 * The owner dashboard: Preact through Vite's own JSX transform (Oxc, automatic runtime), no plugin needed.
 * Built to web/dashboard/dist with hashed names under assets/, served by src/dashboard at /dashboard/.
 * No inline script or style is emitted (the server's CSP allows neither).
 */
export default defineConfig({
  root,
  base: '/dashboard/',
  logLevel: 'warn',
  clearScreen: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  resolve: {
    alias: [
      { find: /^@parley\/sdk$/, replacement: sdk('index.ts') },
      { find: /^@parley\/sdk\/openapi$/, replacement: sdk('generated/openapi.ts') },
    ],
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Never inline assets as data: URLs into JS or CSS: the CSP's img-src allows data:, but one rule is simpler.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
});
