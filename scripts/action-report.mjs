// The report step of action.yml: reads what yiem wrote and gives it to the workflow.
//   node scripts/action-report.mjs run   RESULT.json   EXIT_CODE
//   node scripts/action-report.mjs batch RESULTS.jsonl EXIT_CODE
// Rules:
// - Outputs go to $GITHUB_OUTPUT as `name<<DELIMITER` blocks: the delimiter is random and never
//   occurs in the value, so a multiline (or hostile) answer cannot end its block early or set
//   another output.
// - The summary goes to $GITHUB_STEP_SUMMARY as Markdown. Text from the model or the input file
//   (answers, errors, item ids) is shown in code fences longer than any backtick run in it, or in
//   table cells with `|`, `<`, `>`, `&` and line breaks escaped: it cannot add markup.
// - The results file is read line by line (a batch's can be large); a line that is not JSON (a
//   torn last line) is counted, not fatal. A missing or unreadable file still gets outputs and a
//   summary saying so: the step's exit code stays yiem's.
import { randomBytes } from "node:crypto";
import { appendFileSync, createReadStream, existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";

/** Failed items listed in a batch summary at most. */
const LISTED_FAILURES = 20;

const [mode, file, exitText] = process.argv.slice(2);
if ((mode !== "run" && mode !== "batch") || !file || !/^\d+$/.test(exitText ?? "")) {
  process.stderr.write("usage: node scripts/action-report.mjs run|batch FILE EXIT_CODE\n");
  process.exit(2);
}
const exitCode = Number(exitText);

const outputs = { "exit-code": String(exitCode), "result-file": file };
const summary = mode === "run" ? runReport(file, outputs) : await batchReport(file, outputs);
writeOutputs(outputs);
if (process.env.GITHUB_STEP_SUMMARY) appendFileSync(process.env.GITHUB_STEP_SUMMARY, summary);

function runReport(path, out) {
  const result = readJson(path);
  if (!result) {
    Object.assign(out, { answer: "", structured: "", "stop-reason": "", "run-id": "" });
    return `### yiem run: no result (exit ${exitCode})\n\nyiem wrote no JSON result to ${cell(path)}; the step's log says why.\n\n`;
  }
  const structured = result.structured === undefined || result.structured === null ? "" : JSON.stringify(result.structured);
  const answer = structured !== "" ? structured : typeof result.text === "string" ? result.text : "";
  Object.assign(out, { answer, structured, "stop-reason": String(result.stopReason ?? ""), "run-id": String(result.runId ?? "") });
  const ok = exitCode === 0;
  const usage = result.usage ?? {};
  const lines = [
    `### yiem run: ${ok ? "✅" : "❌"} ${cell(String(result.stopReason ?? "unknown"))} (exit ${exitCode})`,
    "",
    "| model | turns | tool calls | tokens | cost | duration |",
    "|---|---|---|---|---|---|",
    `| ${cell(String(result.model ?? ""))} | ${num(result.turns)} | ${num(result.toolCalls)} | ${num(usage.totalTokens)} | ${typeof result.costUsd === "number" ? `$${result.costUsd.toFixed(4)}` : "–"} | ${seconds(result.durationMs)} |`,
    "",
  ];
  if (typeof result.error === "string" && result.error !== "") lines.push("**Error**", "", fence(result.error, "text"), "");
  if (answer !== "") lines.push("<details open><summary>Answer</summary>", "", fence(answer, structured !== "" ? "json" : "text"), "", "</details>", "");
  return `${lines.join("\n")}\n`;
}

async function batchReport(path, out) {
  const counts = { total: 0, ok: 0, error: 0, limit: 0, other: 0, unreadable: 0 };
  const failures = [];
  let tokens = 0;
  let cost = 0;
  let priced = false;
  if (existsSync(path)) {
    const lines = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === "") continue;
      let item;
      try {
        item = JSON.parse(line);
      } catch {
        counts.unreadable++;
        continue;
      }
      counts.total++;
      const status = item?.status;
      if (status === "ok" || status === "error" || status === "limit") counts[status]++;
      else counts.other++;
      tokens += Number(item?.usage?.totalTokens) || 0;
      if (typeof item?.costUsd === "number") {
        cost += item.costUsd;
        priced = true;
      }
      if (status !== "ok" && failures.length < LISTED_FAILURES) failures.push(item);
    }
  }
  const failed = counts.total - counts.ok;
  Object.assign(out, { total: String(counts.total), ok: String(counts.ok), failed: String(failed) });
  const lines = [
    `### yiem batch: ${exitCode === 0 ? "✅" : "❌"} ${counts.ok} of ${counts.total} ok (exit ${exitCode})`,
    "",
    "| ok | error | limit | other | tokens | cost |",
    "|---|---|---|---|---|---|",
    `| ${counts.ok} | ${counts.error} | ${counts.limit} | ${counts.other} | ${tokens} | ${priced ? `$${cost.toFixed(4)}` : "–"} |`,
    "",
  ];
  if (!existsSync(path)) lines.push(`yiem wrote no results file ${cell(path)}; the step's log says why.`, "");
  if (counts.unreadable > 0) lines.push(`${counts.unreadable} line(s) of the results file are not JSON (a torn last line: \`yiem batch --resume\` repairs it).`, "");
  if (failures.length > 0) {
    lines.push(`**Items that did not succeed**${failed > failures.length ? ` (the first ${failures.length} of ${failed})` : ""}`, "", "| id | status | stop reason | error |", "|---|---|---|---|");
    for (const item of failures) {
      const error = typeof item?.error === "string" ? item.error.split("\n")[0] : "";
      lines.push(`| ${cell(String(item?.id ?? ""))} | ${cell(String(item?.status ?? ""))} | ${cell(String(item?.stopReason ?? ""))} | ${cell(error.slice(0, 300))} |`);
    }
    lines.push("");
  }
  return `${lines.join("\n")}\n`;
}

function readJson(path) {
  try {
    const value = JSON.parse(readFileSync(path, "utf8"));
    return value && typeof value === "object" ? value : null;
  } catch {
    return null;
  }
}

function writeOutputs(values) {
  const target = process.env.GITHUB_OUTPUT;
  if (!target) return;
  let text = "";
  for (const [name, value] of Object.entries(values)) {
    let delimiter;
    do delimiter = `yiem_${randomBytes(16).toString("hex")}`;
    while (value.includes(delimiter));
    text += `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }
  appendFileSync(target, text);
}

/** `text` in a code fence longer than any run of backticks inside it. */
function fence(text, lang) {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(Math.max(3, longest + 1));
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

/** `text` safe inside a Markdown table cell or inline code: no markup, no line break. */
function cell(text) {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/\|/g, "\\|").replace(/`/g, "'").replace(/\r?\n|\r/g, " ");
}

function num(value) {
  return typeof value === "number" ? String(value) : "–";
}

function seconds(ms) {
  return typeof ms === "number" ? `${(ms / 1000).toFixed(1)} s` : "–";
}
