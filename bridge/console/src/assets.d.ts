// Vite bundles imported stylesheets; they export nothing the code reads.
declare module '*.css';
