/**
 * A batch with more items in flight than Node's default listener limit (10): every running item's
 * model request listens to the batch's one stop signal, which must not set off Node's
 * MaxListenersExceededWarning (it reached stderr as a warning blamed on tool or hook code).
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { reply, startChatServer } from "../support/chat-server.js";
import { yiemBin } from "../support/cli.js";

it("16 items at once: every result ok, and no listener-leak warning on stderr", async () => {
  let inFlight = 0;
  let most = 0;
  const server = await startChatServer(
    () =>
      new Promise((resolve) => {
        most = Math.max(most, ++inFlight);
        setTimeout(() => {
          inFlight--;
          resolve(reply.json({ content: "ok" }));
        }, 100);
      }),
  );
  const dir = mkdtempSync(join(tmpdir(), "yiem-batch-concurrency-"));
  try {
    writeFileSync(join(dir, "agent.yaml"), `name: t\nmodel:\n  name: m\n  baseURL: ${server.url}\n`);
    writeFileSync(join(dir, "in.jsonl"), Array.from({ length: 48 }, (_, i) => JSON.stringify({ id: `i${i}`, prompt: "hi" })).join("\n") + "\n");
    const child = spawn(process.execPath, [yiemBin, "batch", "-c", "agent.yaml", "in.jsonl", "-o", "out.jsonl", "--concurrency", "16"], {
      cwd: dir,
      env: { ...process.env, OPENAI_API_KEY: "sk-test", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code, stderr).toBe(0);
    expect(most).toBeGreaterThan(10);
    const results = readFileSync(join(dir, "out.jsonl"), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { status: string });
    expect(results).toHaveLength(48);
    expect(results.every((r) => r.status === "ok")).toBe(true);
    expect(stderr).not.toMatch(/MaxListeners|memory leak/);
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
