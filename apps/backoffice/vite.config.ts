import { defineConfig } from 'vite';

// The back office is served by the API instance under /backoffice (apps/server/src/modules/
// backoffice.ts), from dist/. The build has no inline script or style (the page's CSP allows
// only files from 'self') and inlines no asset as a data: URI.
export default defineConfig({
  base: '/backoffice/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    reportCompressedSize: true,
  },
});
