import { defineConfig } from 'vite';

/** The console is built from this folder into dist/console at the package root, whatever the cwd. */
const here = decodeURIComponent(new URL('.', import.meta.url).pathname);

export default defineConfig({
  root: here,
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: `${here}../../dist/console`,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // No inline scripts or styles, so the Content-Security-Policy can stay at 'self'.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
