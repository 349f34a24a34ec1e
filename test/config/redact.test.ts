import { inspect } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { loadSpec } from "../../src/config/load.js";
import { redactSpec } from "../../src/config/redact.js";
import { redactText } from "../../src/redact.js";
import { secretValues } from "../../src/secrets.js";
import { tempProject, type TempProject } from "../fixtures/config/temp-project.js";

const KEY = "sk-proj-SECRETSECRET-0123456789";
const projects: TempProject[] = [];
afterEach(() => {
  for (const created of projects.splice(0)) created.remove();
});

async function loaded(specText: string, env: NodeJS.ProcessEnv) {
  const p = tempProject({ "agent.config.yaml": specText });
  projects.push(p);
  return loadSpec({ cwd: p.root, env, overrides: {} });
}

describe("redactSpec", () => {
  it("shows where the key comes from, never the key", async () => {
    const spec = await loaded("model: gpt-4o-mini\nsystemPrompt: hello\n", { OPENAI_API_KEY: KEY });
    expect(spec.model.apiKey).toBe(KEY);
    const view = redactSpec(spec) as { model: { apiKey: unknown } };
    expect(view.model.apiKey).toBe("*** (from OPENAI_API_KEY)");
    expect(JSON.stringify(view)).not.toContain(KEY);
  });

  it("the resolved spec itself does not print the key (JSON, inspect, spread)", async () => {
    const spec = await loaded("model: gpt-4o-mini\n", { OPENAI_API_KEY: KEY });
    expect(JSON.stringify(spec)).not.toContain(KEY);
    expect(inspect(spec, { depth: 10 })).not.toContain(KEY);
    expect(JSON.stringify({ ...spec.model })).not.toContain(KEY);
  });

  it("apiKey is null when unset", async () => {
    const spec = await loaded("model: { name: llama3.1:8b, baseURL: 'http://localhost:11434/v1' }\n", {});
    expect((redactSpec(spec) as { model: { apiKey: unknown } }).model.apiKey).toBeNull();
  });

  it("replaces the values of secret-looking variables wherever they appear", async () => {
    const env = {
      OPENAI_API_KEY: KEY,
      GITLAB_TOKEN: "glpat-abcdef123456",
      DB_PASSWORD: "hunter2hunter2",
      SHORT_KEY: "abc",
      PLAIN: "not-a-secret-value",
    };
    const spec = await loaded(
      [
        "name: ${PLAIN}",
        "systemPrompt: 'token ${GITLAB_TOKEN}, pw ${DB_PASSWORD}, key ${OPENAI_API_KEY}, abc stays'",
        "model: { name: m, baseURL: 'http://localhost:8080/v1?t=${GITLAB_TOKEN}' }",
      ].join("\n"),
      env,
    );
    const text = JSON.stringify(redactSpec(spec));
    for (const secret of [KEY, env.GITLAB_TOKEN, env.DB_PASSWORD]) expect(text).not.toContain(secret);
    const view = redactSpec(spec) as { name: string; systemPrompt: string; model: { baseURL: string } };
    expect(view.systemPrompt).toBe("token ***, pw ***, key ***, abc stays");
    expect(view.model.baseURL).toBe("http://localhost:8080/v1?t=***");
    expect(view.name).toBe("not-a-secret-value");
  });

  it("uses the given env for a spec it did not load", async () => {
    const spec = await loaded("model: { name: m, baseURL: 'http://127.0.0.1:1/v1' }\n", {});
    const copy = { ...spec, systemPrompt: "uses s3cr3t-token-value" };
    const view = redactSpec(copy, { SERVICE_TOKEN: "s3cr3t-token-value" }) as { systemPrompt: string };
    expect(view.systemPrompt).toBe("uses ***");
  });
});

describe("secretValues / redactText", () => {
  it("picks secret-named variables, longest first, and skips short values", () => {
    const secrets = secretValues({ A_KEY: "123456", MY_SECRET: "abcdefghij", HOME: "/home/me", PASSWD: "x" }, ["extra-secret"]);
    expect(secrets).toEqual(["extra-secret", "abcdefghij", "123456"]);
    expect(redactText("a abcdefghij b 123456 /home/me", secrets)).toBe("a *** b *** /home/me");
  });

  it("also hides what children never inherit: credential carriers and URLs with a password", () => {
    const env = {
      DATABASE_URL: "postgres://app@db/prod",
      SENTRY_DSN: "https://abc123@o1.ingest.example/9",
      SLACK_WEBHOOK_URL: "https://hooks.example/T000/B000",
      REDIS_URL: "redis://:hunter22@cache:6379",
      HTTPS_PROXY: "http://proxy.example:3128",
      GIT_AUTHOR_NAME: "Ada Lovelace",
    };
    const secrets = secretValues(env);
    expect(secrets.sort()).toEqual([env.DATABASE_URL, env.REDIS_URL, env.SENTRY_DSN, env.SLACK_WEBHOOK_URL].sort());
    expect(redactText(`proxy ${env.HTTPS_PROXY} by ${env.GIT_AUTHOR_NAME}`, secrets)).toBe(`proxy ${env.HTTPS_PROXY} by ${env.GIT_AUTHOR_NAME}`);
  });
});
