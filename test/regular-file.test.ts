/**
 * src/regular-file.ts: files a user or a spec names are read only when they are regular files;
 * anything else is reported by what it is, without waiting on it or reading it.
 */
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSpec } from "../src/config/load.js";
import { readRegularFileSync, readRegularText, readWhole } from "../src/regular-file.js";

let dir: string;
let socketServer: Server;
const socketPath = () => path.join(dir, "s.sock");

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "yiem-regular-"));
  writeFileSync(path.join(dir, "plain.txt"), "hello");
  execFileSync("mkfifo", [path.join(dir, "fifo")]);
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(socketPath(), resolve));
});
afterAll(async () => {
  await new Promise<void>((resolve) => socketServer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe("readRegularText / readRegularFileSync", () => {
  it("read a regular file and name every other kind", async () => {
    expect(await readRegularText(path.join(dir, "plain.txt"))).toEqual({ text: "hello" });
    expect(await readRegularText(path.join(dir, "fifo"))).toEqual({ kind: "a FIFO" });
    expect(await readRegularText(socketPath())).toEqual({ kind: "a socket" });
    expect(await readRegularText(dir)).toEqual({ kind: "a folder" });
    expect(await readRegularText("/dev/zero")).toEqual({ kind: "a device" });
    expect(readRegularFileSync(path.join(dir, "fifo"))).toMatchObject({ kind: "a FIFO" });
    expect(String((readRegularFileSync(path.join(dir, "plain.txt")) as { bytes: Buffer }).bytes)).toBe("hello");
  });

  it("throw other open errors as they are", async () => {
    await expect(readRegularText(path.join(dir, "missing"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a replay model naming a FIFO is a spec error that says so", async () => {
    await expect(loadSpec({ cwd: dir, env: {}, overrides: { model: "replay:fifo" }, requireModel: true })).rejects.toThrow(
      /replay file "fifo" is not a regular file \(a FIFO; /,
    );
  });
});

describe("reading into a buffer that is reused (the code cache reads its entry into the bundle's buffer)", () => {
  it("readRegularFileSync reads into `reuse` when it is large enough, and into a new buffer when not", () => {
    const reuse = Buffer.alloc(16, 0x2a);
    const small = readRegularFileSync(path.join(dir, "plain.txt"), undefined, reuse);
    if (!("bytes" in small)) throw new Error("plain.txt reads as a file");
    expect(small.bytes.toString()).toBe("hello");
    expect(small.bytes.buffer).toBe(reuse.buffer);
    writeFileSync(path.join(dir, "longer.txt"), "x".repeat(40));
    const large = readRegularFileSync(path.join(dir, "longer.txt"), undefined, reuse);
    if (!("bytes" in large)) throw new Error("longer.txt reads as a file");
    expect(large.bytes.toString()).toBe("x".repeat(40));
    expect(large.bytes.buffer).not.toBe(reuse.buffer);
    expect(reuse.subarray(5).every((byte) => byte === 0x2a)).toBe(true);
  });

  it("readWhole stops at the file's end when it is shorter than the size asked for", () => {
    const fd = openSync(path.join(dir, "plain.txt"), "r");
    try {
      expect(readWhole(fd, 64).toString()).toBe("hello");
    } finally {
      closeSync(fd);
    }
  });
});
