// Stylesheets imported for their side effect: esbuild bundles them into explore.css.
declare module '*.css'
