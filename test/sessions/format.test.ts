/** The session file format, ids and the stored-message checker (src/sessions/), without a process. */
import { describe, expect, it } from "vitest";
import { parseSessionFile, readHeader, SESSION_FORMAT_VERSION } from "../../src/sessions/format.js";
import { generateSessionId, resolveSessionId, sessionIdProblem } from "../../src/sessions/ids.js";
import { checkStoredMessages } from "../../src/sessions/messages.js";

const session = (extra: Record<string, unknown> = {}) => ({
  format: "yiem-session", version: 1, id: "s1", revision: 3, createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-02T00:00:00.000Z",
  spec: "/p/agent.config.yaml", folder: "/p", forkedFrom: null,
  runs: [
    { runId: "r1", savedAt: "2026-01-01T00:00:00.000Z", model: "m", baseURL: null, spec: null, folder: "/p", stopReason: "completed", turns: 2,
      messages: [{ role: "user", content: "time?" }, { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "getTime", arguments: "{}" }] }] },
    { runId: "r2", savedAt: "2026-01-02T00:00:00.000Z", model: "m", baseURL: "http://x/v1", spec: null, folder: "/p", stopReason: "completed", turns: 1,
      messages: [{ role: "tool", toolCallId: "c1", toolName: "getTime", content: [{ type: "text", text: "12:00" }], isError: false }, { role: "assistant", content: "noon", toolCalls: [], reasoning: { reasoning_content: "…", from: "m at http://x/v1" } }] },
  ],
  ...extra,
});

describe("parseSessionFile", () => {
  it("accepts a valid file, with tool results answering calls of an earlier run", () => {
    const parsed = parseSessionFile(JSON.stringify(session()), "s1");
    expect(parsed.ok).toBe(true);
  });

  it("refuses a newer version by name, and an older or missing one as unknown", () => {
    expect(parseSessionFile(JSON.stringify(session({ version: SESSION_FORMAT_VERSION + 1 })), "s1")).toEqual({ ok: false, problem: "written by a newer yiem (format version 2; this yiem reads version 1): upgrade yiem to use it" });
    expect(parseSessionFile(JSON.stringify(session({ version: 0 })), "s1")).toMatchObject({ ok: false, problem: "unknown format version 0 (this yiem reads version 1)" });
    expect(parseSessionFile(JSON.stringify({ version: 1, messages: [] }), "s1")).toMatchObject({ ok: false, problem: expect.stringContaining("not a yiem session file") });
  });

  it("a newer-version file still gives its header, so --continue can scope it", () => {
    expect(readHeader(JSON.stringify(session({ version: 7 })))).toEqual({ id: "s1", updatedAt: "2026-01-02T00:00:00.000Z", spec: "/p/agent.config.yaml", folder: "/p" });
    expect(readHeader("{")).toBeUndefined();
  });

  it.each([
    ["an empty file", "", /not valid JSON \(truncated or hand-edited\?\): it is empty/],
    ["an unknown top-level key", JSON.stringify(session({ extra: 1 })), /unknown key "extra"/],
    ["a bad revision", JSON.stringify(session({ revision: 0 })), /"revision" must be an integer >= 1/],
    ["a bad time", JSON.stringify(session({ updatedAt: "yesterday" })), /ISO-8601/],
    ["an unknown stop reason", JSON.stringify(session({ runs: [{ ...session().runs[0], stopReason: "done" }] })), /runs\[0\]: unknown "stopReason" "done"/],
  ])("refuses %s", (_name, text, problem) => {
    const parsed = parseSessionFile(text, "s1");
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toMatch(problem);
  });
});

describe("checkStoredMessages", () => {
  it("refuses a second result for the same call, and unknown keys", () => {
    const call = { role: "assistant", content: "", toolCalls: [{ id: "c1", name: "t", arguments: "{}" }] };
    const result = { role: "tool", toolCallId: "c1", toolName: "t", content: [{ type: "text", text: "x" }], isError: false };
    expect(checkStoredMessages([call, result])).toMatchObject({ ok: true });
    expect(checkStoredMessages([call, result, result])).toEqual({ ok: false, problem: 'messages[2]: a result for tool call "c1", which no earlier assistant message made (or which was already answered)' });
    expect(checkStoredMessages([{ role: "user", content: "x", name: "y" }])).toEqual({ ok: false, problem: 'messages[0]: unknown key "name" in a user message' });
  });

  it("allows system messages only when asked", () => {
    expect(checkStoredMessages([{ role: "system", content: "s" }]).ok).toBe(false);
    expect(checkStoredMessages([{ role: "system", content: "s" }], { allowSystem: true }).ok).toBe(true);
  });
});

describe("session ids", () => {
  it("allow letters, digits, _ and - only, so an id is always a plain file name", () => {
    for (const id of ["pr-123", "nightly_2", "A1"]) expect(sessionIdProblem(id)).toBeUndefined();
    for (const id of ["", "-x", "../x", "a/b", "a.b", "a b", "x".repeat(65)]) expect(sessionIdProblem(id)).toBeDefined();
  });

  it("generated ids sort by creation time and differ within a second", () => {
    const a = generateSessionId(new Date("2026-01-01T00:00:00Z"));
    const b = generateSessionId(new Date("2026-01-01T00:00:01Z"));
    expect(a < b).toBe(true);
    expect(a).toMatch(/^20260101-000000-[0-9a-f]{6}$/);
    expect(generateSessionId(new Date(0))).not.toBe(generateSessionId(new Date(0)));
  });

  it("resolve a full id, a unique prefix, an ambiguous prefix, or the nearest", () => {
    const ids = ["pr-1", "pr-12", "pr-2", "nightly"];
    expect(resolveSessionId("pr-1", ids)).toEqual({ kind: "found", id: "pr-1" });
    expect(resolveSessionId("pr-2", ids)).toEqual({ kind: "found", id: "pr-2" });
    expect(resolveSessionId("night", ids)).toEqual({ kind: "found", id: "nightly" });
    expect(resolveSessionId("pr", ids)).toEqual({ kind: "ambiguous", matches: ["pr-1", "pr-12", "pr-2"] });
    expect(resolveSessionId("nigthly", ids)).toMatchObject({ kind: "missing", nearest: expect.arrayContaining(["nightly"]) });
  });
});
