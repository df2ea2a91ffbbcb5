import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { findBrowser } from './browser.ts';

/**
 * Where Dawn finds Vulkan on Linux. Dawn loads `libvulkan.so.1` (the Vulkan loader) with dlopen,
 * which searches LD_LIBRARY_PATH as it was when the process started; the loader then picks drivers
 * (ICDs) from the JSON manifests in the standard folders, or only those in VK_ICD_FILENAMES. So the
 * engine host must be started with both already in its environment: that is why the native runtime
 * is a child process, not a thread of the CLI.
 */

/** The system loader, as Debian's libvulkan1 and other distributions install it. */
const SYSTEM_LOADERS = [
  '/usr/lib/x86_64-linux-gnu/libvulkan.so.1',
  '/usr/lib/aarch64-linux-gnu/libvulkan.so.1',
  '/usr/lib64/libvulkan.so.1',
  '/usr/lib/libvulkan.so.1',
];

/** Folders of installed GPU drivers' ICD manifests (Mesa, NVIDIA, AMD). */
const ICD_DIRS = ['/usr/share/vulkan/icd.d', '/etc/vulkan/icd.d', '/usr/local/share/vulkan/icd.d'];

/**
 * BENCH_VULKAN_DIRS (colon-separated) replaces every folder searched for a loader and SwiftShader:
 * for an unusual install, and for the tests that check what happens when there is none.
 */
function overrideDirs(): string[] | undefined {
  return process.env.BENCH_VULKAN_DIRS?.split(':').filter(Boolean);
}

/** Folders of a Chromium that ships its own loader and SwiftShader (Debian's, or Playwright's). */
function chromiumDirs(): string[] {
  const override = overrideDirs();
  if (override) return override;
  const dirs = ['/usr/lib/chromium', '/usr/lib/chromium-browser'];
  try {
    const path = findBrowser().executablePath;
    if (path) dirs.push(dirname(realpathSync(path)));
  } catch {
    // No browser: only the fixed folders.
  }
  return dirs;
}

export type AdapterChoice = 'default' | 'swiftshader';
export const ADAPTER_CHOICES: readonly AdapterChoice[] = ['default', 'swiftshader'];

export interface VulkanSetup {
  /** Environment to start the engine host with. */
  env: Record<string, string>;
  /** What was found, in words, for the report. */
  description: string;
}

/** Raised when nothing can run: the message says what to install. */
export class VulkanNotFoundError extends Error {
  override readonly name = 'VulkanNotFoundError';
}

/**
 * The loader (the system's, else Chromium's) and the drivers: those VK_ICD_FILENAMES names if
 * it is set, else the installed GPU drivers, or Chromium's SwiftShader when asked for
 * (`--adapter swiftshader`) or when no GPU driver is installed. Other platforms need nothing (Metal on macOS, D3D12 on Windows).
 */
export function findVulkan(adapter: AdapterChoice): VulkanSetup {
  if (process.platform !== 'linux')
    return { env: {}, description: `${process.platform}: Dawn's native backend` };
  const chromium = chromiumDirs();
  const systemLoader = overrideDirs() ? undefined : SYSTEM_LOADERS.find((p) => existsSync(p));
  const chromiumLoader = chromium.find((d) => existsSync(join(d, 'libvulkan.so.1')));
  const swiftshader = chromium.map((d) => join(d, 'vk_swiftshader_icd.json')).find((p) => existsSync(p));
  const gpuDrivers = ICD_DIRS.filter((d) => existsSync(d)).flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith('.json'))
      .map((f) => join(d, f)),
  );
  const env: Record<string, string> = {};
  const found: string[] = [];
  if (systemLoader) {
    found.push(`Vulkan loader ${systemLoader}`);
  } else if (chromiumLoader) {
    env.LD_LIBRARY_PATH = [chromiumLoader, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
    found.push(`the Vulkan loader in ${chromiumLoader}`);
  } else {
    throw new VulkanNotFoundError(
      "No Vulkan loader (libvulkan.so.1) found. Install one: Debian/Ubuntu `apt-get install libvulkan1` plus your GPU's Vulkan driver (mesa-vulkan-drivers, or the NVIDIA driver), or `apt-get install chromium`, whose bundled loader and SwiftShader this tool can use.",
    );
  }
  const userIcd = process.env.VK_ICD_FILENAMES;
  if (userIcd && adapter === 'default') {
    // A driver chosen by hand (a manifest written for a container, say) is the person's call.
    found.push(`drivers from VK_ICD_FILENAMES=${userIcd}`);
  } else if (adapter === 'swiftshader' || gpuDrivers.length === 0) {
    if (!swiftshader) {
      throw new VulkanNotFoundError(
        adapter === 'swiftshader'
          ? "--adapter swiftshader needs Chromium's SwiftShader (vk_swiftshader_icd.json); install Chromium (Debian: apt-get install chromium)."
          : "No Vulkan GPU driver is installed (no ICD manifest in /usr/share/vulkan/icd.d or /etc/vulkan/icd.d), and no Chromium SwiftShader to fall back to. Install your GPU's Vulkan driver (mesa-vulkan-drivers, or the NVIDIA driver), or Chromium.",
      );
    }
    env.VK_ICD_FILENAMES = swiftshader;
    found.push(
      adapter === 'swiftshader'
        ? `SwiftShader (${swiftshader}), as asked`
        : `no GPU driver installed, so SwiftShader (${swiftshader})`,
    );
  } else {
    found.push(`GPU drivers ${gpuDrivers.join(', ')}`);
  }
  return { env, description: found.join('; ') };
}
