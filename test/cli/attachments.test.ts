/**
 * Through the real CLI: `-a/--attach` (repeatable, `-` for stdin) and spec
 * `attachments:`: text as named fenced blocks, png/jpeg/gif/webp as image parts (by their bytes,
 * not their names), each refusal (binary, missing, over a cap, stdin twice) exit 2 before any
 * model call, and attachments kept by `--session` and `--record`/replay. Every request body is
 * checked against the official wire schema (assertClean).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";
import { assertEventStream, type CliResult } from "../support/cli.js";
import { runCliInProcess as runCli } from "../support/cli-in-process.js";

const SPEC = `model:
  name: test-model
  baseURL: \${TEST_BASE_URL}
  apiKeyEnv: TEST_API_KEY
  maxRetries: 0
  timeoutMs: 5s
limits: { maxTurns: 3 }
`;

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
const JPEG = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46, 0x49, 0x46, 0]);
const GIF = Buffer.concat([Buffer.from("GIF89a", "latin1"), Buffer.from([1, 0, 1, 0, 0, 0, 0])]);
const WEBP = Buffer.concat([Buffer.from("RIFF", "latin1"), Buffer.from([26, 0, 0, 0]), Buffer.from("WEBPVP8 ", "latin1"), Buffer.from([0, 0, 0, 0])]);

let dir: string;
let server: ChatServer | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "yiem-attach-"));
  await writeFile(join(dir, "agent.config.yaml"), SPEC);
  await writeFile(join(dir, "notes.md"), "Line one\n```js\nx()\n```\n");
  // Named like text, but PNG bytes: the kind comes from the bytes.
  await writeFile(join(dir, "shot.txt"), PNG);
  await writeFile(join(dir, "photo.jpg"), JPEG);
  await writeFile(join(dir, "anim.gif"), GIF);
  await writeFile(join(dir, "pic.webp"), WEBP);
  await writeFile(join(dir, "program.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 0, 0]));
  await mkdir(join(dir, "spec"));
  await writeFile(join(dir, "spec", "agent.config.yaml"), `${SPEC}attachments: [context.txt]\n`);
  await writeFile(join(dir, "spec", "context.txt"), "from the spec folder");
});
afterAll(() => rm(dir, { recursive: true, force: true }));
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function run(args: string[], options: { cwd?: string; stdin?: string } = {}): Promise<CliResult & { end: Record<string, any> }> {
  const r = await runCli(["run", ...args], {
    cwd: options.cwd ?? dir,
    stdin: options.stdin,
    env: { TEST_BASE_URL: server?.url ?? "http://127.0.0.1:9/v1", TEST_API_KEY: "sk-attach" },
  });
  assertEventStream(r.events, { requireStart: false });
  return Object.assign(r, { end: r.events.at(-1) as Record<string, any> });
}

const userOf = (body: any) => body.messages.find((m: any) => m.role === "user");

describe("attachments in the request", () => {
  it("a text file is a named fenced block after the prompt, the fence longer than its backticks", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["-a", "notes.md", "Summarise"]);
    expect(r.code, r.stderr).toBe(0);
    expect(userOf(server.requests[0]).content).toBe("Summarise\n\nAttachment: notes.md\n````\nLine one\n```js\nx()\n```\n````");
    server.assertClean();
  });

  it("png, jpeg, gif and webp are image parts, known by their bytes (shot.txt is a PNG)", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["--attach", "shot.txt", "-a", "photo.jpg", "-a", "anim.gif", "-a", "pic.webp", "What is in these?"]);
    expect(r.code, r.stderr).toBe(0);
    const user = userOf(server.requests[0]);
    expect(user.content[0]).toEqual({ type: "text", text: "What is in these?\n\nAttached images, in order: shot.txt, photo.jpg, anim.gif, pic.webp" });
    expect(user.content.slice(1).map((p: any) => p.image_url.url)).toEqual([
      `data:image/png;base64,${PNG.toString("base64")}`,
      `data:image/jpeg;base64,${JPEG.toString("base64")}`,
      `data:image/gif;base64,${GIF.toString("base64")}`,
      `data:image/webp;base64,${WEBP.toString("base64")}`,
    ]);
    server.assertClean();
  });

  it("-a - reads stdin as one attachment named stdin", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["-a", "-", "Review this diff"], { stdin: "+added line\n" });
    expect(r.code, r.stderr).toBe(0);
    expect(userOf(server.requests[0]).content).toBe("Review this diff\n\nAttachment: stdin\n```\n+added line\n```");
    server.assertClean();
  });

  it("a spec's attachments resolve against the spec's folder", async () => {
    server = await startChatServer([reply.stream({ content: "ok" })]);
    const r = await run(["Go"], { cwd: join(dir, "spec") });
    expect(r.code, r.stderr).toBe(0);
    expect(userOf(server.requests[0]).content).toContain("Attachment: context.txt\n```\nfrom the spec folder\n```");
    server.assertClean();
  });
});

describe("refused attachments: exit 2 before any model call", () => {
  it("a binary file that is not an image is refused by name", async () => {
    server = await startChatServer([]);
    const r = await run(["-a", "program.bin", "Run it"]);
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/--attach: file "program.bin" is a binary file and not a png, jpeg, gif or webp image/);
    expect(server.requests).toHaveLength(0);
  });

  it("a binary file is reported with the other problems, before the API key is asked for", async () => {
    await writeFile(join(dir, "no-key.yaml"), "model: gpt-4o-mini\n");
    const r = await runCli(["run", "-c", "no-key.yaml", "-a", "program.bin", "-a", "missing.txt", "--events", "ndjson", "Run it"], {
      cwd: dir,
      env: { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined },
    });
    expect(r.code).toBe(2);
    const error = String(r.events.at(-1)?.error);
    expect(error).toMatch(/^2 problems:/);
    expect(error).toContain('--attach: file "program.bin" is a binary file and not a png, jpeg, gif or webp image');
    expect(error).toContain('--attach: file "missing.txt" not found');
    expect(error).not.toContain("OPENAI_API_KEY");
  });

  it("a missing file, named with its path", async () => {
    server = await startChatServer([]);
    const r = await run(["-a", "missing.txt", "Read it"]);
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/--attach: file "missing.txt" not found/);
    expect(server.requests).toHaveLength(0);
  });

  it("a file over the 5 MiB cap, and attachments over 20 MiB together", async () => {
    server = await startChatServer([]);
    await writeFile(join(dir, "big.txt"), "x".repeat(5 * 1024 * 1024 + 1));
    const big = await run(["-a", "big.txt", "Read it"]);
    expect(big.code).toBe(2);
    expect(big.end.error).toMatch(/file "big.txt" is 5 MiB, more than the 5 MiB an attachment may have/);
    const part = "y".repeat(4 * 1024 * 1024);
    const names = ["p1.txt", "p2.txt", "p3.txt", "p4.txt", "p5.txt", "p6.txt"];
    for (const name of names) await writeFile(join(dir, name), part);
    const many = await run([...names.flatMap((n) => ["-a", n]), "Read them"]);
    expect(many.code).toBe(2);
    expect(many.end.error).toMatch(/the attachments are 24 MiB together, more than the 20 MiB a run may attach/);
    expect(server.requests).toHaveLength(0);
  });

  it("-a - with the prompt word - (stdin twice) is a usage error", async () => {
    server = await startChatServer([]);
    const r = await run(["-a", "-", "Explain", "-"], { stdin: "text" });
    expect(r.code).toBe(2);
    expect(r.end.error).toMatch(/--attach - and the prompt word - both read stdin/);
  });
});

describe("attachments are kept", () => {
  it("--session saves the image with the prompt and sends it again on the next run", async () => {
    server = await startChatServer([reply.stream({ content: "A chart." }), reply.stream({ content: "Blue." })]);
    const session = join(dir, "chat.json");
    const first = await run(["--session", session, "-a", "shot.txt", "What is it?"]);
    expect(first.code, first.stderr).toBe(0);
    const saved = await readFile(session, "utf8");
    expect(saved).toContain(PNG.toString("base64"));
    const second = await run(["--session", session, "What colour?"]);
    expect(second.code, second.stderr).toBe(0);
    const firstUser = userOf(server.requests[1]);
    expect(firstUser.content[1].image_url.url).toBe(`data:image/png;base64,${PNG.toString("base64")}`);
    server.assertClean();
  });

  it("--record then replay: the recorded run replays with the same attachments", async () => {
    server = await startChatServer([reply.stream({ content: "Two lines." })]);
    const recording = join(dir, "rec.jsonl");
    const recorded = await run(["--record", recording, "-a", "notes.md", "-a", "photo.jpg", "Describe"]);
    expect(recorded.code, recorded.stderr).toBe(0);
    // --dry-run writes no events: only the request it would send.
    const replayed = await runCli(["run", "-m", `replay:${recording}`, "-a", "notes.md", "-a", "photo.jpg", "Describe", "--dry-run"], { cwd: dir, env: { TEST_BASE_URL: server.url } });
    expect(replayed.code, replayed.stderr).toBe(0);
    const request = JSON.parse(replayed.stdout).request;
    expect(userOf(request).content[1].image_url.url).toMatch(/^data:image\/jpeg;base64,/);
    const answer = await run(["-m", `replay:${recording}`, "-a", "notes.md", "-a", "photo.jpg", "Describe"]);
    expect(answer.code, answer.stderr).toBe(0);
    expect(answer.stdout).toBe("Two lines.\n");
    server.assertClean();
  });
});
