/** The command word told before yargs runs (src/cli/command-word.ts). */
import { describe, expect, it } from "vitest";
import { commandWordIndex, commandWordOf } from "../../src/cli/command-word.js";

describe("commandWordOf", () => {
  it("is the first word that is neither an option nor the value of a common option", () => {
    expect(commandWordOf(["tools", "list"])).toBe("tools");
    expect(commandWordOf(["-c", "spec.yaml", "tools", "list"])).toBe("tools");
    expect(commandWordOf(["--config", "spec.yaml", "--debug", "config"])).toBe("config");
    expect(commandWordOf(["--tool-dir", "tools", "--mcp-config", "m.json", "run", "hi"])).toBe("run");
    expect(commandWordOf(["--config=spec.yaml", "sessions", "list"])).toBe("sessions");
  });

  it("is empty without one: only options, a value option at the end, or words after --", () => {
    expect(commandWordOf([])).toBe("");
    expect(commandWordOf(["--help"])).toBe("");
    expect(commandWordOf(["-c"])).toBe("");
    expect(commandWordOf(["--", "tools"])).toBe("");
  });

  it("takes an unknown option's next word as the command (yargs still decides what the line means)", () => {
    expect(commandWordOf(["--model", "gpt", "run"])).toBe("gpt");
  });

  it("commandWordIndex says where it is (main.ts reads the word after it: mcp serve, tools call)", () => {
    expect(commandWordIndex(["-c", "spec.yaml", "mcp", "serve", "--agent"])).toBe(2);
    expect(commandWordIndex(["tools", "call", "x"])).toBe(0);
    expect(commandWordIndex(["--debug"])).toBe(-1);
  });
});
