/**
 * The process io's stdout/stderr (src/cli/host/fd-output.ts): written to the descriptor while that
 * can never block, else (and once anything else is asked of it) through the real stream, with
 * nothing lost or reordered. Real descriptors: a file, a FIFO whose reader stops reading.
 */
import { execFileSync } from "node:child_process";
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fdOutput } from "../../src/cli/host/fd-output.js";
import type { CliOutput } from "../../src/cli/io.js";

let dir: string;
const opened: number[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "yiem-fd-output-"));
});
afterEach(() => {
  for (const fd of opened.splice(0)) closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

/** A stand-in for process.stdout: records what it is given. */
function fakeStream() {
  const written: string[] = [];
  const events: string[] = [];
  const stream = {
    columns: 77,
    isTTY: false,
    write(chunk: string | Uint8Array, ...rest: unknown[]) {
      written.push(Buffer.from(chunk).toString("utf8"));
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    },
    on(event: string) {
      events.push(`on ${event}`);
      return stream;
    },
    once(event: string) {
      events.push(`once ${event}`);
      return stream;
    },
    removeListener() {
      return stream;
    },
  };
  let builds = 0;
  const real = () => {
    builds++;
    return stream as unknown as CliOutput;
  };
  return { written, events, real, builds: () => builds };
}

const open = (path: string, flags: number) => {
  const fd = openSync(path, flags);
  opened.push(fd);
  return fd;
};

describe("fd output", () => {
  it("a file is written directly, in order, callbacks on a later tick; listeners wait for the real stream, which anything else builds", async () => {
    const file = join(dir, "out.txt");
    const fd = open(file, constants.O_WRONLY | constants.O_CREAT);
    const fake = fakeStream();
    const out = fdOutput(fd, fake.real, () => false);
    out.on("error", () => {});
    out.once("close", () => {});
    let called = false;
    expect(out.write("one\n", () => (called = true))).toBe(true);
    expect(called).toBe(false);
    await new Promise((resolve) => process.nextTick(resolve));
    expect(called).toBe(true);
    out.write(Buffer.from("two\n"));
    expect(out.isTTY).toBe(false);
    expect(out.fd).toBe(fd);
    expect(readFileSync(file, "utf8")).toBe("one\ntwo\n");
    expect(fake.builds()).toBe(0);
    expect((out as { columns?: number }).columns).toBe(77); // builds the real stream…
    expect(fake.builds()).toBe(1);
    expect(fake.events).toEqual(["on error", "once close"]); // …which gets the listeners
    out.write("three\n");
    expect(fake.written).toEqual(["three\n"]); // and every write from then on
    expect(readFileSync(file, "utf8")).toBe("one\ntwo\n");
  });

  it("a terminal is always written through the real stream", () => {
    const fd = open(join(dir, "tty-standin"), constants.O_WRONLY | constants.O_CREAT);
    const fake = fakeStream();
    const out = fdOutput(fd, fake.real, () => true);
    // A regular file never is a terminal: the answer comes from the check only for a character device.
    out.write("x");
    expect(fake.builds()).toBe(0);
    const devNull = open("/dev/null", constants.O_WRONLY);
    const tty = fdOutput(devNull, fake.real, () => true);
    tty.write("to the terminal");
    expect(fake.written).toEqual(["to the terminal"]);
  });

  it("an output whose stream Node built already (a warning printed) is written through that stream", () => {
    const file = join(dir, "out.txt");
    const fd = open(file, constants.O_WRONLY | constants.O_CREAT);
    const fake = fakeStream();
    const out = fdOutput(fd, fake.real, () => false, () => true);
    out.write("after the warning");
    expect(fake.written).toEqual(["after the warning"]);
    expect(readFileSync(file, "utf8")).toBe("");
  });

  it("a descriptor that is not open: the write goes to the real stream (which does what Node does)", () => {
    const fake = fakeStream();
    const out = fdOutput(987, fake.real, () => false);
    out.write("lost?");
    expect(fake.written).toEqual(["lost?"]);
  });

  it.runIf(process.platform === "linux")("a FIFO whose reader stopped reading never blocks: what the pipe cannot take goes to the real stream, in order", () => {
    const fifo = join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const reader = open(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = open(fifo, constants.O_WRONLY);
    const fake = fakeStream();
    const out = fdOutput(writer, fake.real, () => false);
    const chunks = Array.from({ length: 64 }, (_, i) => `${String(i).padStart(4, "0")}${"x".repeat(8 * 1024 - 5)}\n`);
    for (const chunk of chunks) out.write(chunk); // 512 KB, far more than a pipe holds: returns at once
    expect(fake.builds()).toBe(1);
    const inPipe: Buffer[] = [];
    const buffer = Buffer.alloc(1 << 16);
    for (;;) {
      let n = 0;
      try {
        n = readSync(reader, buffer, 0, buffer.length, null);
      } catch {
        break; // EAGAIN: drained
      }
      if (n === 0) break;
      inPipe.push(Buffer.from(buffer.subarray(0, n)));
    }
    expect(Buffer.concat(inPipe).toString("utf8") + fake.written.join("")).toBe(chunks.join(""));
    expect(inPipe.length).toBeGreaterThan(0);
  });
});
