/**
 * The provider's environment: with `env` given, its defaults (base URL, key) and the openai
 * package's own variables (organization, project, custom headers) come from that env alone, never
 * from the process's; without one (a library caller), from the process's environment. Requests
 * to OpenAI's default URL are sent on to the scripted server by the `fetch` option, which
 * records the URL the client asked for.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIProvider } from "../../src/provider/openai.js";
import type { ModelRequest } from "../../src/provider/types.js";
import { reply, startChatServer, type ChatServer } from "../support/chat-server.js";

let server: ChatServer;
/** The URLs the client asked for, in order. */
let asked: string[];

beforeEach(async () => {
  server = await startChatServer(() => reply.json({ content: "ok" }));
  asked = [];
  // The process's own environment (test/support/setup-file.ts puts it back).
  Object.assign(process.env, {
    OPENAI_API_KEY: "sk-process-key",
    OPENAI_BASE_URL: "http://127.0.0.1:9/process/v1",
    OPENAI_ORG_ID: "org-process",
    OPENAI_PROJECT_ID: "proj-process",
    OPENAI_CUSTOM_HEADERS: "X-Process: yes",
  });
});
afterEach(async () => {
  await server.close();
});

/** Records the URL and sends the request to the scripted server instead. */
const toServer: typeof globalThis.fetch = (input, init) => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  asked.push(url);
  return globalThis.fetch(`${server.url}/chat/completions`, init);
};

const request = (): ModelRequest => ({ messages: [{ role: "user", content: "hi" }], tools: [], signal: new AbortController().signal });

describe("openai provider: the environment it reads", () => {
  it("with env: OpenAI's URL, env's key and headers; nothing of the process's environment", async () => {
    const provider = createOpenAIProvider({
      model: "gpt-test",
      env: { OPENAI_API_KEY: "sk-env-key", OPENAI_PROJECT_ID: " proj-env ", OPENAI_CUSTOM_HEADERS: "X-Env: one\nX-Other:two" },
      fetch: toServer,
    });
    expect((await provider.complete(request())).message.content).toBe("ok");
    expect(asked).toEqual(["https://api.openai.com/v1/chat/completions"]);
    const headers = server.received[0].headers;
    expect(headers.authorization).toBe("Bearer sk-env-key");
    expect(headers["openai-organization"]).toBeUndefined();
    expect(headers["openai-project"]).toBe("proj-env");
    expect(headers["x-env"]).toBe("one");
    expect(headers["x-other"]).toBe("two");
    expect(headers["x-process"]).toBeUndefined();
    expect(headers["content-type"]).toBe("application/json");
    // The package's own User-Agent, as a plain client of it sends (not the name of yiem's subclass).
    expect(headers["user-agent"]).toMatch(/^OpenAI\/JS \d+\.\d+\.\d+/);
  });

  it("with an empty env: the key placeholder and OpenAI's URL", async () => {
    const provider = createOpenAIProvider({ model: "gpt-test", env: {}, fetch: toServer });
    await provider.complete(request());
    expect(asked).toEqual(["https://api.openai.com/v1/chat/completions"]);
    expect(server.received[0].headers.authorization).toBe("Bearer no-api-key");
    expect(server.received[0].headers["x-process"]).toBeUndefined();
  });

  it("apiKeyEnv names the one variable the key is read from", async () => {
    const provider = createOpenAIProvider({ model: "gpt-test", apiKeyEnv: "OTHER_KEY", env: { OTHER_KEY: "sk-other-key", OPENAI_API_KEY: "sk-env-key" }, fetch: toServer });
    await provider.complete(request());
    expect(server.received[0].headers.authorization).toBe("Bearer sk-other-key");
  });

  it("apiKeyEnv naming an unset variable: the placeholder, never OPENAI_API_KEY, and the 401 names the variable", async () => {
    await server.close();
    server = await startChatServer(() => reply.error(401, "bad key"));
    const provider = createOpenAIProvider({ model: "gpt-test", apiKeyEnv: "OTHER_KEY", maxRetries: 0, env: { OPENAI_API_KEY: "sk-env-key" }, fetch: toServer });
    const failure = await provider.complete(request()).then(() => undefined, (error: unknown) => error as Error);
    expect(server.received[0].headers.authorization).toBe("Bearer no-api-key");
    expect(failure?.message).toContain("no API key is set: set OTHER_KEY");
    expect(failure?.message).not.toContain("sk-env-key");
  });

  it("without env (a library caller): the process's environment, as documented", async () => {
    const provider = createOpenAIProvider({ model: "gpt-test", fetch: toServer });
    await provider.complete(request());
    expect(asked).toEqual(["http://127.0.0.1:9/process/v1/chat/completions"]);
    const headers = server.received[0].headers;
    expect(headers.authorization).toBe("Bearer sk-process-key");
    expect(headers["openai-organization"]).toBe("org-process");
    expect(headers["openai-project"]).toBe("proj-process");
    expect(headers["x-process"]).toBe("yes");
  });
});
