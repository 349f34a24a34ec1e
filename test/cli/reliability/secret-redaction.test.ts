/**
 * Secrets never print.
 * - cuts (the 100,000-character tool-result cut, the 600-character server-error cut) never split a
 *   key, so no first characters of one survive redaction;
 * - `tools list` (and `--json`), `tools show` and `tools check` hide secrets as `run` does;
 * - the key's variable is secret whatever its name (`apiKeyEnv: LLM_API`), also in spec errors;
 * - `*_JWT` and the credential helpers (`GIT_ASKPASS`, `SSH_ASKPASS`, `VSCODE_GIT_IPC_HANDLE`) are
 *   secret variables: hidden in output, withheld from children.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { isSecretVariable } from "../../../src/secrets.js";
import { createRedactor, cutText } from "../../../src/redact.js";
import { childEnv } from "../../../src/tools/process.js";
import { reply, startChatServer, type ChatServer } from "../../support/chat-server.js";
import { runCliInProcess as runCli } from "../../support/cli-in-process.js";
import { eventsOf, expectRunEnded, SECRET_KEY, writeSpec, yiem } from "../../fixtures/battery/harness.js";

const dir = mkdtempSync(join(tmpdir(), "yiem-secrets-round2-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const KEY_START = SECRET_KEY.slice(0, 6);
const call = (id: string, name: string) => ({ id, name, arguments: "{}" });

describe("a cut never splits a secret", () => {
  it("cutText moves a cut inside a known secret to its start", () => {
    createRedactor(["sk-cut-secret-123"]);
    const text = `${"a".repeat(10)}sk-cut-secret-123tail`;
    expect(cutText(text, 14, (n) => `[+${n}]`)).toBe(`${"a".repeat(10)}[+21]`);
    expect(cutText(text, 5, (n) => `[+${n}]`)).toBe("aaaaa[+26]");
  });

  it("a tool result whose key crosses the 100,000-character cut shows no part of it", async () => {
    const tools = join(dir, "long-tools");
    mkdirSync(tools, { recursive: true });
    writeFileSync(join(tools, "long.ts"), 'export default { name: "long", label: "l", description: "d", inputSchema: { type: "object" }, execute: async () => "x".repeat(99_995) + process.env.TEST_API_KEY };\n');
    server = await startChatServer([reply.json({ toolCalls: [call("l", "long")] }), reply.json({ content: "done" })]);
    const r = await yiem(["run", "-c", writeSpec(dir, "long", { toolDirs: [tools] }), "hi"], { server });
    expectRunEnded(r, { code: 0, stopReason: "completed" });
    const text = eventsOf(r, "toolExecutionEnd")[0].result.content[0].text as string;
    expect(text).toMatch(/^x{99995}\n\[… output cut: \d+ more characters not shown\]$/);
    expect(r.stderr.includes(KEY_START)).toBe(false);
  });

  it("a server error echoing the key across the 600-character cut shows no part of it", async () => {
    server = await startChatServer([reply.error(400, `${"e".repeat(585)} key: ${SECRET_KEY}`)]);
    const r = await yiem(["run", "-c", writeSpec(dir, "server-cut"), "hi"], { server });
    const end = expectRunEnded(r, { code: 1, stopReason: "error" });
    expect(end.error).toMatch(/e{585} key: …/);
    expect(r.stderr.includes(KEY_START)).toBe(false);
  });
});

describe("every command hides secrets the same way", () => {
  it("tools list, list --json, show and check hide a secret in a description and in a load error", async () => {
    const tools = join(dir, "leaky-tools");
    mkdirSync(tools, { recursive: true });
    writeFileSync(join(tools, "db.ts"), 'export default { name: "db", label: "db", description: "talks to " + process.env.DATABASE_URL, inputSchema: { type: "object" }, execute: async () => "ok" };\n');
    writeFileSync(join(tools, "broken.ts"), 'throw new Error("cannot use key " + process.env.LLM_API);\n');
    const project = join(dir, "leaky");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "agent.config.yaml"), `model: { name: m, apiKeyEnv: LLM_API }\ntoolDirs: [${JSON.stringify(tools)}]\n`);
    const dbUrl = "postgres://app@db.internal:5432/prod-database";
    const env = { DATABASE_URL: dbUrl, LLM_API: "plain-named-key-value-42", YIEM_CACHE_DIR: join(dir, "cache") };
    for (const args of [["tools", "list"], ["tools", "list", "--json"], ["tools", "show", "db"], ["tools", "check"]]) {
      const r = await runCli(args, { cwd: project, env });
      expect(r.stdout + r.stderr, args.join(" ")).toMatch(/\*\*\*/);
      for (const secret of [dbUrl, "plain-named-key-value-42"]) expect((r.stdout + r.stderr).includes(secret), `${args.join(" ")} leaks ${secret}`).toBe(false);
    }
  });

  it("a key from a variable without a secret word in its name is hidden in spec errors", async () => {
    const project = join(dir, "plain-key");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "agent.config.yaml"), 'model: { name: m, apiKeyEnv: LLM_API, maxRetries: "${LLM_API}" }\n');
    for (const args of [["config"], ["run", "--dry-run", "hi"], ["tools", "list"]]) {
      const r = await runCli(args, { cwd: project, env: { LLM_API: "plain-named-key-value-42" } });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/maxRetries/);
      expect(r.stderr.includes("plain-named-key-value-42"), args.join(" ")).toBe(false);
    }
  });
});

describe("JWT variables and credential helpers are secret", () => {
  it("are secret names, and are withheld from child processes", () => {
    const carriers = { CI_JOB_JWT: "eyJhbGciOi.jwt", CI_JOB_JWT_V2: "eyJhbGciOi.jwt2", GIT_ASKPASS: "/usr/bin/askpass", SSH_ASKPASS: "/usr/bin/ssh-askpass", VSCODE_GIT_IPC_HANDLE: "/run/user/1000/vscode-git.sock", VSCODE_GIT_ASKPASS_MAIN: "/opt/code/askpass-main.js" };
    for (const [name, value] of Object.entries(carriers)) expect(isSecretVariable(name, value), name).toBe(true);
    expect(isSecretVariable("JWT_LIBRARY_VERSION_OK", "1")).toBe(true);
    expect(isSecretVariable("JWTISH", "1")).toBe(false);
    const env = childEnv({}, { ...carriers, PATH: "/usr/bin" });
    expect(Object.keys(env).filter((name) => name in carriers)).toEqual([]);
    expect(env.PATH).toBe("/usr/bin");
  });
});
