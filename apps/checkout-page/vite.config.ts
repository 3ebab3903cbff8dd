import { defineConfig } from 'vite';

// The hosted checkout page is served by the instance at /checkout/<session id> (index.html) and
// /checkout/assets/* (apps/server's checkout module). The build has no inline script or style
// (the page's CSP allows only files from 'self') and inlines no asset as a data: URI.
export default defineConfig({
  base: '/checkout/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2020',
    reportCompressedSize: true,
  },
});
