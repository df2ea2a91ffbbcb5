import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { CONTENT_SECURITY_POLICY, ISOLATION_HEADERS } from '../src/headers.ts';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.wasm': 'application/wasm',
  '.safetensors': 'application/octet-stream',
  '.gguf': 'application/octet-stream',
};

/** The built app; BENCH_DIST_DIR lets a second checkout's build be served side by side. */
export const DIST_DIR = process.env.BENCH_DIST_DIR ?? 'dist';

/** URL prefix under which a local model folder is served to the worker (same origin, so the CSP allows it). */
export const MODEL_URL_PREFIX = '/__model/';

/**
 * How the CLIs serve `--model PATH` and what the engine loads from it: a Hugging Face folder
 * (config.json + model.safetensors) as it is; a .safetensors file (config.json beside it) or a
 * llama.cpp .gguf file (config inside) from the folder that holds it, named as the weights file.
 */
export function servedModel(path: string): {
  dir: string;
  source: { kind: 'url'; baseUrl: string; weightsFile?: string };
} {
  if (/\.(safetensors|gguf)$/i.test(path)) {
    return {
      dir: dirname(path),
      source: { kind: 'url', baseUrl: MODEL_URL_PREFIX, weightsFile: basename(path) },
    };
  }
  return { dir: path, source: { kind: 'url', baseUrl: MODEL_URL_PREFIX } };
}

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

function safeJoin(root: string, urlPath: string): string | undefined {
  const path = normalize(join(root, decodeURIComponent(urlPath)));
  return path === root || path.startsWith(root + sep) ? path : undefined;
}

/**
 * Serves the built app on 127.0.0.1 with the isolation headers and CSP, and optionally a model
 * folder under /__model/. Only loopback: WebGPU needs a secure context, and localhost is one.
 */
export async function serveApp(options: {
  distDir: string;
  modelDir?: string;
  port?: number;
}): Promise<StaticServer> {
  const dist = resolve(options.distDir);
  if (!existsSync(join(dist, 'index.html'))) {
    throw new Error(`No built app in ${dist}: run "npm run build" first.`);
  }
  const modelDir = options.modelDir ? resolve(options.modelDir) : undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    let path: string | undefined;
    if (modelDir && url.pathname.startsWith(MODEL_URL_PREFIX)) {
      path = safeJoin(modelDir, url.pathname.slice(MODEL_URL_PREFIX.length));
    } else {
      path = safeJoin(dist, url.pathname.endsWith('/') ? `${url.pathname}index.html` : url.pathname);
    }
    if (!path || !existsSync(path) || !statSync(path).isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, {
      ...ISOLATION_HEADERS,
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'Content-Type': MIME[extname(path)] ?? 'application/octet-stream',
      'Content-Length': statSync(path).size,
      'Cache-Control': 'no-store',
    });
    createReadStream(path).pipe(res);
  });
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', ok);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}
