// WGSL kernels are imported as strings through Vite's `?raw` suffix.
declare module '*.wgsl?raw' {
  const source: string;
  export default source;
}
