// Node module hooks for `?raw` imports: the file's text as the module's default export, as Vite gives it.
import { readFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  if (specifier.endsWith('?raw')) {
    const url = new URL(specifier, context.parentURL);
    return { url: url.href, shortCircuit: true, format: 'module' };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url.endsWith('?raw')) {
    const text = readFileSync(new URL(url.slice(0, -4)), 'utf8');
    return { format: 'module', shortCircuit: true, source: `export default ${JSON.stringify(text)};` };
  }
  return next(url, context);
}
