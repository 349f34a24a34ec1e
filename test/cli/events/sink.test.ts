import { spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, createWriteStream, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import type { AgentEvent, AgentEventBody } from "yiem";
import { createEventSink, defaultEventsMode } from "../../../src/cli/events/sink.js";
import { createEventStamper } from "../../../src/loop/run-frame.js";
import { captureStream } from "../../support/streams.js";

const ajv = new Ajv({ allErrors: true });
(addFormats as unknown as (a: Ajv) => void)(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(new URL("../../../schema/events.schema.json", import.meta.url), "utf8")));

/** 100,000-event tests on a loaded 2-core machine: generous, never a timing assertion. */
const HEAVY_TEST_TIMEOUT_MS = 120_000;
const usage = { promptTokens: 3, completionTokens: 2, totalTokens: 5 };
const tmp = mkdtempSync(join(tmpdir(), "yiem-events-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** agentStart, turnStart, `updates` × toolExecutionUpdate, agentEnd: all stamped. */
function* runEvents(updates: number): Generator<AgentEvent> {
  const stamp = createEventStamper("run_test");
  const bodies: AgentEventBody[] = [
    { type: "agentStart", schemaVersion: 1, yiemVersion: "0.1.0", model: "m", tools: ["t"], toolExecution: "sequential", configPath: null },
    { type: "turnStart", turn: 1 },
  ];
  for (const body of bodies) yield stamp(body);
  for (let i = 0; i < updates; i++) {
    yield stamp({ type: "toolExecutionUpdate", turn: 1, toolCallId: "c1", toolName: "t", partialResult: { content: [{ type: "text", text: `line ${i}` }] } });
  }
  yield stamp({ type: "agentEnd", stopReason: "completed", turns: 1, toolCalls: 1, usage, durationMs: 7 });
}

function expectCompleteNdjson(text: string, expected: number): void {
  expect(text.endsWith("\n")).toBe(true);
  const lines = text.slice(0, -1).split("\n");
  expect(lines.length).toBe(expected);
  lines.forEach((line, i) => {
    const event = JSON.parse(line) as AgentEvent;
    if (event.seq !== i + 1) expect.fail(`line ${i + 1} has seq ${event.seq}`);
  });
  expect(JSON.parse(lines[lines.length - 1]).type).toBe("agentEnd");
}

describe("createEventStamper", () => {
  it("stamps runId, seq from 1 and an ISO timestamp, common fields first", () => {
    const stamp = createEventStamper("run_a");
    const first = stamp({ type: "turnStart", turn: 1 });
    const second = stamp({ type: "warning", message: "x" });
    expect(first).toMatchObject({ type: "turnStart", runId: "run_a", seq: 1, turn: 1 });
    expect(second.seq).toBe(2);
    expect(new Date(first.ts).toISOString()).toBe(first.ts);
    expect(Object.keys(first).slice(0, 4)).toEqual(["type", "runId", "seq", "ts"]);
  });
});

describe("defaultEventsMode", () => {
  it("is pretty on a TTY and ndjson otherwise", () => {
    expect(defaultEventsMode(captureStream({ isTTY: true }).stream)).toBe("pretty");
    expect(defaultEventsMode(captureStream().stream)).toBe("ndjson");
  });
});

describe("ndjson sink", () => {
  it("writes exactly one schema-valid JSON object per line and nothing else", async () => {
    const out = captureStream();
    const sink = createEventSink({ mode: "ndjson", stream: out.stream });
    sink.log("a human note that must not appear");
    for (const event of runEvents(3)) sink.emit(event);
    await sink.close();
    expectCompleteNdjson(out.text(), 6);
    for (const line of out.text().trim().split("\n")) expect(validate(JSON.parse(line)), line).toBe(true);
    expect(out.text()).not.toContain("human note");
  });

  it("joins the events of one event-loop turn into one write, across awaits, in order", async () => {
    const out = captureStream();
    const sink = createEventSink({ mode: "ndjson", stream: out.stream });
    const events = [...runEvents(3)];
    // A tool round trip: events separated by awaits of settled promises, all in one turn.
    for (const event of events.slice(0, 4)) {
      sink.emit(event);
      await Promise.resolve();
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(out.writes()).toBe(1);
    sink.emit(events[4]);
    sink.emit(events[5]);
    await sink.close();
    expect(out.writes()).toBe(2);
    expectCompleteNdjson(out.text(), 6);
  });

  it("loses none of 100,000 updates written to a file", async () => {
    const path = join(tmp, "events.ndjson");
    const file = createWriteStream(path);
    const sink = createEventSink({ mode: "ndjson", stream: file });
    for (const event of runEvents(100_000)) sink.emit(event);
    await sink.close();
    expectCompleteNdjson(readFileSync(path, "utf8"), 100_003);
    file.end();
    await once(file, "close");
  }, HEAVY_TEST_TIMEOUT_MS);

  it("loses none of 100,000 updates under backpressure from a slow reader, in order", async () => {
    const out = captureStream({ slow: true });
    const sink = createEventSink({ mode: "ndjson", stream: out.stream });
    for (const event of runEvents(100_000)) sink.emit(event);
    await sink.close();
    expectCompleteNdjson(out.text(), 100_003);
    // Queued lines were handed over joined, not one write each.
    expect(out.writes()).toBeLessThan(100_003);
  }, HEAVY_TEST_TIMEOUT_MS);

  it("loses none of 100,000 updates written into a pipe read by another process", async () => {
    const counter = spawn(
      process.execPath,
      ["-e", "let n=0;process.stdin.on('data',d=>{for(const b of d)if(b===10)n++});process.stdin.on('end',()=>process.stdout.write(String(n)))"],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    let counted = "";
    counter.stdout.on("data", (d: Buffer) => (counted += d.toString()));
    const sink = createEventSink({ mode: "ndjson", stream: counter.stdin });
    for (const event of runEvents(100_000)) sink.emit(event);
    await sink.close();
    counter.stdin.end();
    await once(counter, "close");
    expect(Number(counted)).toBe(100_003);
  }, HEAVY_TEST_TIMEOUT_MS);

  it("loses none of 100,000 events on a real process.stderr (file or pipe) even with process.exit() after close()", async () => {
    const script = [
      'import { createJiti } from "jiti";',
      "const jiti = createJiti(import.meta.url, { fsCache: false });",
      'const { createCallSink } = await jiti.import("./src/cli/events/sink.ts");',
      'const { processIo } = await jiti.import("./src/cli/host/process-io.ts");',
      'const { createEventStamper } = await jiti.import("./src/loop/run-frame.ts");',
      'const sink = createCallSink(processIo(), "ndjson");',
      'const stamp = createEventStamper("run_child");',
      'for (let i = 0; i < 100000; i++) sink.emit(stamp({ type: "messageUpdate", turn: 1, delta: "token " + i }));',
      "await sink.close();",
      "process.exit(0);",
    ].join("\n");
    const root = new URL("../../..", import.meta.url).pathname;
    const path = join(tmp, "stderr.ndjson");
    const fd = openSync(path, "w");
    const fileChild = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: root, stdio: ["ignore", "ignore", fd] });
    const pipeChild = spawn(process.execPath, ["--input-type=module", "-e", script], { cwd: root, stdio: ["ignore", "ignore", "pipe"] });
    let piped = "";
    pipeChild.stderr.on("data", (d: Buffer) => (piped += d.toString()));
    await Promise.all([once(fileChild, "close"), once(pipeChild, "close")]);
    closeSync(fd);
    expect(readFileSync(path, "utf8").split("\n").length - 1).toBe(100_000);
    expect(piped.split("\n").length - 1).toBe(100_000);
    expect(JSON.parse(piped.slice(piped.lastIndexOf("\n", piped.length - 2) + 1))).toMatchObject({ seq: 100_000 });
  }, HEAVY_TEST_TIMEOUT_MS);

  it("never throws and close() resolves when the stream fails (reader gone)", async () => {
    const broken = new Writable({
      write(_chunk, _enc, callback) {
        callback(Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
      },
    });
    const sink = createEventSink({ mode: "ndjson", stream: broken });
    for (const event of runEvents(1000)) expect(() => sink.emit(event)).not.toThrow();
    await expect(sink.close()).resolves.toBeUndefined();
  });

  it("close() resolves when the stream is destroyed while lines wait for drain", async () => {
    const stuck = new Writable({
      highWaterMark: 16,
      write() {
        // Never calls back: the reader is stuck until the stream is destroyed.
      },
    });
    const sink = createEventSink({ mode: "ndjson", stream: stuck });
    for (const event of runEvents(100)) sink.emit(event);
    const closed = sink.close();
    stuck.destroy();
    await expect(closed).resolves.toBeUndefined();
  });

  it("still writes one valid line when tool details hold a BigInt or a cycle", async () => {
    const out = captureStream();
    const sink = createEventSink({ mode: "ndjson", stream: out.stream });
    const details: Record<string, unknown> = { big: 10n };
    details.self = details;
    const stamp = createEventStamper("run_b");
    sink.emit(stamp({ type: "toolExecutionEnd", turn: 1, toolCallId: "c", toolName: "t", result: { content: [], details }, isError: false, durationMs: 1 }));
    await sink.close();
    const event = JSON.parse(out.text());
    expect(validate(event)).toBe(true);
    expect(event.result.details).toEqual({ big: "10", self: "[Circular]" });
  });

  it("escapes C1 controls when the stream is a terminal, keeping the JSON equal", async () => {
    const out = captureStream({ isTTY: true });
    const sink = createEventSink({ mode: "ndjson", stream: out.stream });
    const event = createEventStamper("run_c")({ type: "messageUpdate", turn: 1, delta: "a\x9b2Jb" });
    sink.emit(event);
    await sink.close();
    expect(out.text()).not.toContain("\x9b");
    expect(JSON.parse(out.text())).toEqual(event);
  });
});

describe("none sink", () => {
  it("writes nothing", async () => {
    const out = captureStream();
    const sink = createEventSink({ mode: "none", stream: out.stream });
    for (const event of runEvents(10)) sink.emit(event);
    sink.log("note");
    await sink.close();
    expect(out.text()).toBe("");
  });
});
