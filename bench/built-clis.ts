/**
 * The CLIs built to dist-node/cli-<name>.mjs with the engine host (vite.node.config.ts): those
 * that drive the engine, which `npm run <name>` starts through bench/built.ts.
 */
export const BUILT_CLIS = ['bench', 'verify', 'generate', 'serve-api'] as const;

/** Where the build puts a CLI, relative to the repository root. */
export function builtCliPath(name: string): string {
  return `dist-node/cli-${name}.mjs`;
}

/** The built file of a CLI given by its source (`bench/<name>.ts`), or undefined for one not built. */
export function builtCliOf(script: string): string | undefined {
  const name = /^(?:\.\/)?bench\/([\w-]+)\.ts$/.exec(script)?.[1];
  return BUILT_CLIS.some((c) => c === name) ? builtCliPath(name as string) : undefined;
}
