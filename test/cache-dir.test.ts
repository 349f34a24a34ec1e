/** Where yiem keeps its caches: YIEM_CACHE_DIR, the package's node_modules/.cache, or the user's cache folder. */
import { afterEach, describe, expect, it } from "vitest";
import { defaultCacheDirFor, yiemCacheDir } from "../src/cache-dir.js";
import { packageRoot } from "../src/package-info.js";
import { repoRoot } from "./support/cli.js";
import { join } from "node:path";

const saved = process.env.YIEM_CACHE_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.YIEM_CACHE_DIR;
  else process.env.YIEM_CACHE_DIR = saved;
});

describe("cache folder", () => {
  it("is YIEM_CACHE_DIR when set, read at every call", () => {
    process.env.YIEM_CACHE_DIR = "/tmp/yiem-cache-a";
    expect(yiemCacheDir()).toBe("/tmp/yiem-cache-a");
    process.env.YIEM_CACHE_DIR = "/tmp/yiem-cache-b";
    expect(yiemCacheDir()).toBe("/tmp/yiem-cache-b");
  });

  it("is the package's node_modules/.cache/yiem when writable", () => {
    expect(packageRoot()).toBe(repoRoot.replace(/[\\/]$/, ""));
    const inputs = { packageRoot: "/opt/yiem", env: {}, home: "/home/u", writable: () => true };
    expect(defaultCacheDirFor(inputs)).toBe(join("/opt/yiem", "node_modules", ".cache", "yiem"));
  });

  it("falls back to XDG_CACHE_HOME, then ~/.cache, when the package folder is not writable", () => {
    const seen: string[] = [];
    const writable = (dir: string) => {
      seen.push(dir);
      return false;
    };
    expect(defaultCacheDirFor({ packageRoot: "/usr/lib/node_modules/yiem", env: { XDG_CACHE_HOME: "/xdg" }, home: "/home/u", writable })).toBe(join("/xdg", "yiem"));
    expect(defaultCacheDirFor({ packageRoot: "/usr/lib/node_modules/yiem", env: {}, home: "/home/u", writable })).toBe(join("/home/u", ".cache", "yiem"));
    expect(seen[0]).toBe(join("/usr/lib/node_modules/yiem", "node_modules", ".cache", "yiem"));
  });
});
