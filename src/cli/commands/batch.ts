/**
 * `yiem batch INPUT -o RESULTS`: one spec over every line of INPUT, each item a full agent run,
 * `--concurrency` at a time in this process, each result appended to RESULTS as it finishes
 * (docs/batch.md). The logic lives in src/batch/; this file wires it to the command line.
 *
 * Rules:
 * - Before anything runs: the flags, the spec, the results file (../../batch/ledger.ts), the
 *   tools and hooks (loaded once for all items), then the check pass over the whole input
 *   (../../batch/check-pass.ts); any problem there is exit 2, reported together.
 * - stdin as INPUT (`-`) is first copied to a private temporary file (streamed; ./batch-input.ts),
 *   so it can be checked and then run like a file; the copy is removed at the end.
 * - Every model request of every item passes one limiter (../../batch/limiter.ts).
 * - The first signal stops starting items; running ones get `--grace` (default 10 s) to finish,
 *   then are stopped and recorded `aborted`; exit 128 + the signal's number. A second signal
 *   exits at once (written results stay; the rest runs again on --resume). `--batch-timeout`
 *   does the same without a grace, exit 3.
 * - Exit code (docs/batch.md, "Exit codes"): a signal's; else 1 when any item ended `error` (also
 *   one `--resume` skipped: its earlier result) or a result could not be written; else 3 when any
 *   ended `limit` (the same) or the batch deadline left items unfinished; else 0. A usage or input
 *   problem before the batch starts is 2.
 */
import { randomUuid } from "../../random-id.js";
import { setMaxListeners } from "node:events";
import { resolve } from "node:path";
import { guardChannels } from "../../channels/guard.js";
import { messageOf } from "../../error-text.js";
import { createRedactor } from "../../redact.js";
import { addSecretEnvNames, secretValues } from "../../secrets.js";
import { RunStop } from "../../loop/abort.js";
import { parseDuration } from "../../config/duration.js";
import { modelServerURL } from "../../provider/reasoning.js";
import { packageVersion } from "../../package-info.js";
import { zeroUsage } from "../../tools/usage.js";
import { openLedger, openResultsWriter } from "../../batch/ledger.js";
import { createRequestLimiter, limitedFetch } from "../../batch/limiter.js";
import { emptyTally, runItems, type BatchSource } from "../../batch/runner.js";
import { checkInput, startIdRangeScans } from "../../batch/check-pass.js";
import { takeEarlyRangeScans } from "../early-scan.js";
import { parseShard, type Shard } from "../../batch/shard.js";
import { progressOf, round6 } from "../../batch/events.js";
import type { BatchEndBody } from "../../loop/batch-event-bodies.js";
import type { InputLineError } from "../../batch/input.js";
import type { BatchResult } from "../../batch/types.js";
import { createBatchSink } from "../events/batch-sink.js";
import type { BatchSink } from "../events/batch-sink-types.js";
import { defaultModeOf, type EventsMode } from "../events/sink.js";
import { reportUsageError } from "../errors.js";
import { UsageError } from "../../errors.js";
import { EXIT, exitCodeForError, exitCodeForSignal } from "../exit-codes.js";
import type { CliIo } from "../io.js";
import { STDIN_MARK } from "../stdin-mark.js";
import { installSignalHandlers, type SignalHandling } from "../signals.js";
import { callCacheScope, findLoadProblems, loadProblemMessage, loadRegistry, loadSpecFromArgv, withMcp } from "../setup.js";
import { sameFile, strictLoadError, writtenFileProblem } from "../preflight.js";
import { refuseFinalAnswerClash } from "../structured-output.js";
import { itemMessages, runBatchItem, type BatchRunShared } from "./batch-items.js";
import { inputFileProblem, spoolStdin } from "./batch-input.js";

export const DEFAULT_CONCURRENCY = 4;
export const MAX_CONCURRENCY = 1024;
export const DEFAULT_GRACE_MS = 10_000;

/** The batch's own flags, checked. */
interface BatchFlags {
  input: string;
  output: string;
  concurrency: number;
  rpm: number;
  batchTimeoutMs: number;
  graceMs: number;
  shard?: Shard;
  resume: boolean;
  skipBadLines: boolean;
  check: boolean;
  /** --full-check: the check pass parses every line whole, whatever the input's size. */
  fullCheck: boolean;
}

export async function handler(argv: Record<string, unknown>, io: CliIo): Promise<number> {
  const batchId = randomUuid();
  const explicit = argv.events as EventsMode | undefined;
  const mode = explicit ?? defaultModeOf(io);
  const sink = createBatchSink(io, batchId, mode, explicit === "ndjson");
  const signals = installSignalHandlers(io);
  const cleanup: Array<() => Promise<unknown>> = [];
  let code: number;
  try {
    code = await runBatch(argv, io, sink, signals, cleanup);
  } catch (error) {
    const message = createRedactor(secretValues(io.env))(messageOf(error));
    code = exitCodeForError(error) === EXIT.usage ? EXIT.usage : EXIT.failure;
    if (mode === "ndjson" || mode === "github") sink.batch(endBody({ failure: message, exitCode: code }));
    else {
      await sink.close();
      reportUsageError(io, message);
    }
  } finally {
    for (const step of cleanup.reverse()) await step().catch(() => {});
  }
  await sink.close();
  return code;
}

/** A batchEnd body; counts default to 0. */
function endBody(fields: Partial<BatchEndBody> & { exitCode: number }): BatchEndBody {
  return { type: "batchEnd", total: 0, ok: 0, error: 0, limit: 0, aborted: 0, skipped: 0, notRun: 0, usage: zeroUsage(), durationMs: 0, ...fields };
}

async function runBatch(argv: Record<string, unknown>, io: CliIo, sink: BatchSink, signals: SignalHandling, cleanup: Array<() => Promise<unknown>>): Promise<number> {
  const startedAt = performance.now();
  const problems: string[] = [];
  const flags = batchFlags(argv, io, problems);
  // The check pass's worker: started before the CLI loaded (../early-scan.ts) when it
  // guessed this input, else now, so that its start and scan overlap the spec's loading (docs/batch.md).
  const scansRanges = flags.check && !flags.fullCheck && !flags.resume && flags.input !== "-" && problems.length === 0;
  const early = takeEarlyRangeScans(scansRanges ? flags.input : undefined);
  const rangeScans = scansRanges ? (early ?? startIdRangeScans(flags.input, flags.shard)) : [];
  cleanup.push(async () => rangeScans.forEach((scan) => scan.cancel()));
  // Stopping: a signal (from now on: also during the check pass) or the deadline stops new
  // items; running items get their own signal, after the grace.
  const stopStarting = new AbortController();
  const stopRunning = new AbortController();
  // Every running item's model requests listen to it (up to --concurrency at once, each removed when done): Node's leak warning at 11 would be a false alarm.
  setMaxListeners(0, stopRunning.signal);
  let timedOut = false;
  let graceTimer: NodeJS.Timeout | undefined;
  const onSignal = () => {
    stopStarting.abort();
    const name = signals.received ?? "a signal";
    sink.note(`${name}: no new items start; running items have ${flags.graceMs / 1000} s to finish (a second signal exits at once)`);
    graceTimer = setTimeout(() => stopRunning.abort(new RunStop("aborted", `the batch was stopped by ${name} and this item did not finish within the ${flags.graceMs} ms grace`)), flags.graceMs);
  };
  // A parent that is gone (killed without passing the signal on) stops the batch as SIGHUP would.
  cleanup.push(async () => stopWatchingParent());
  const stopWatchingParent = io.host.watchParent(() => signals.raise("SIGHUP"));
  if (signals.controller.signal.aborted) onSignal();
  else signals.controller.signal.addEventListener("abort", onSignal, { once: true });
  cleanup.push(async () => {
    clearTimeout(graceTimer);
    signals.controller.signal.removeEventListener("abort", onSignal);
  });
  if (argv.attach !== undefined && [argv.attach].flat().map(String).includes("-")) problems.push('--attach - cannot be used by a batch: give each item its text as "stdin"');
  let template: string | undefined;
  if (argv["prompt-template"] !== undefined) {
    const { readFlagValue } = await import("../flag-value.js");
    template = await readFlagValue("prompt-template", String(argv["prompt-template"]), io).catch((error: Error) => {
      problems.push(error.message);
      return undefined;
    });
  }
  const spec = await loadSpecFromArgv(argv, io, true, problems);
  const secrets = secretValues(io.env, [spec.model.apiKey]);
  const redact = createRedactor(secrets);
  // Messages name the input as the user gave it: "stdin", never the private copy spoolStdin makes.
  const inputName = flags.input === "-" ? "stdin" : flags.input;
  if (flags.input === "-") flags.input = await spoolStdin(io, cleanup, stopStarting.signal);
  const ledger = await openLedger(flags.output, flags.resume);
  if (ledger.repairedTornLine) sink.batch({ type: "warning", message: `${flags.output}: its last line was cut off (the batch was killed while writing it); it was removed and that item runs again` });
  if (ledger.dropped > 0) sink.batch({ type: "warning", message: `${flags.output}: ${ledger.dropped} result${ledger.dropped === 1 ? "" : "s"} without a final status (aborted) removed; those items run again` });

  const processes = await import("../../tools/process.js");
  addSecretEnvNames(spec.model.apiKeyEnv);
  const allowed = (await import("../../tools/policy.js")).createToolPolicy(spec.tools.allow, spec.tools.deny);
  const shared0 = { spec, template, isToolAllowed: allowed };
  const source: BatchSource = {
    file: flags.input,
    ...(flags.shard ? { shard: flags.shard } : {}),
    done: ledger.done,
    prepare: (item) => void itemMessages(item, shared0),
    ...(flags.fullCheck ? { fullCheckBytes: Infinity, fullCheckLines: Infinity } : {}),
    rangeScans,
  };
  const report = flags.check ? await checkInput(source, stopStarting.signal) : undefined;
  // A signal before anything started (while stdin was read, the spec loaded or the check ran): nothing starts, and the items were not all counted.
  if (stopStarting.signal.aborted) {
    const code = exitCodeForSignal(signals.received ?? "SIGTERM");
    sink.batch(endBody({ total: null, notRun: null, durationMs: Math.round(performance.now() - startedAt), exitCode: code }));
    return code;
  }
  if (report && report.problemCount > 0 && !flags.skipBadLines && !signals.received) {
    const more = report.problemCount > report.problems.length ? `\n  … and ${report.problemCount - report.problems.length} more` : "";
    throw new UsageError(`${inputName}: ${report.problemCount} bad line${report.problemCount === 1 ? "" : "s"}, so nothing ran (--skip-bad-lines records them as errors and runs the rest):\n${report.problems.map((p) => `  ${p}`).join("\n")}${more}`);
  }
  if (report?.idsOnlyFrom !== undefined) sink.note(`${inputName}: lines from ${report.idsOnlyFrom} on were checked for their ids only (the input is over 32 MiB or 100,000 lines); a bad line among them becomes its item's error result (--full-check checks every line first)`);

  guardChannels({
    onOutput: ({ stream, text }) => sink.batch({ type: "warning", message: redact(`tool or hook code wrote to ${stream}: ${text}`) }),
    onUncaught: (error, kind) => sink.batch({ type: "warning", message: redact(`tool or hook code ${kind === "exception" ? "threw outside its call" : "left a promise rejection unhandled"}: ${messageOf(error)}`) }),
  });
  const [{ providerFor }, { runAgent }, { withRedactedDeltas }, loaded, hooks] = await Promise.all([
    import("../provider-for.js"),
    import("../../loop/run-agent.js"),
    import("../../provider/redacting.js"),
    loadRegistry(spec, callCacheScope(io)).then((loaded) => withMcp(loaded, spec, packageVersion(), signals.controller.signal)),
    import("../../hooks/index.js").then((m) => m.loadSpecHooks(spec.hooks, { cwd: spec.baseDir, cache: callCacheScope(io), env: io.env })),
  ]);
  if (loaded.mcp) cleanup.push(() => loaded.mcp!.close());
  cleanup.push(async () => processes.killAllChildren());
  const loadProblems = await findLoadProblems(spec, loaded);
  const strictError = strictLoadError(spec, loadProblems, io.cwd);
  if (strictError) throw strictError;
  refuseFinalAnswerClash(spec, loaded.registry);
  for (const problem of loadProblems) sink.batch({ type: "warning", message: redact(loadProblemMessage(problem)) });

  const limiter = createRequestLimiter({ rpm: flags.rpm });
  const fetch = limitedFetch(limiter);
  const shared: BatchRunShared = {
    ...shared0,
    registry: loaded.registry,
    hooks,
    cwd: io.cwd,
    redact,
    newProvider: async () => withRedactedDeltas(await providerFor(spec, io.env, { fetch }), secrets),
    runAgent,
    yiemVersion: packageVersion(),
    ...(spec.model.replayFile ? {} : { baseURL: modelServerURL(spec.model.baseURL, io.env) }),
    ...(sink.itemEvents ? { onItemEvent: (event, itemId) => sink.item(redact(event), itemId) } : {}),
  };

  const total = report ? report.total : null;
  sink.batch({
    type: "batchStart",
    input: argv.input === STDIN_MARK ? "-" : flags.input,
    output: flags.output,
    total,
    skipped: report?.skipped ?? 0,
    concurrency: flags.concurrency,
    shard: flags.shard ?? null,
    resumed: flags.resume,
  });

  const deadline = flags.batchTimeoutMs > 0 ? setTimeout(() => {
    timedOut = true;
    stopStarting.abort();
    stopRunning.abort(new RunStop("aborted", `the batch timed out after ${flags.batchTimeoutMs} ms (--batch-timeout)`));
  }, flags.batchTimeoutMs) : undefined;

  const writer = await openResultsWriter(flags.output);
  const tally = emptyTally();
  const elapsed = () => performance.now() - startedAt;
  const ticker = setInterval(() => sink.progress(progressOf(tally, total, elapsed())), 200);
  try {
    await runItems({
      source,
      concurrency: flags.concurrency,
      stopStarting: stopStarting.signal,
      ...(report ? { checked: report.index } : {}),
      runItem: (item) => runBatchItem(item, shared, stopRunning.signal),
      badLine: (error, id) => badLineResult(error, id),
      onResult: (result) => {
        writer.write(result);
        if (writer.failure) stopStarting.abort();
        sink.progress(progressOf(tally, total, elapsed()));
      },
    }, tally);
  } finally {
    clearInterval(ticker);
    clearTimeout(deadline);
  }
  let writeFailure: string | undefined;
  await writer.close().catch((error: Error) => {
    writeFailure = error.message;
  });
  if (writeFailure) sink.batch({ type: "warning", message: writeFailure });
  const code = signals.received ? exitCodeForSignal(signals.received)
    : tally.error > 0 || tally.skippedError > 0 || writeFailure ? EXIT.failure
    : tally.limit > 0 || tally.skippedLimit > 0 || tally.aborted > 0 || timedOut ? EXIT.limit
    : EXIT.ok;
  sink.progress(progressOf(tally, total, elapsed()), true);
  const finished = tally.ok + tally.error + tally.limit + tally.aborted;
  // Without a (whole) check, the items are counted only when the run pass read the input to its end.
  const counted = total ?? (tally.reachedEnd ? tally.seen : null);
  sink.batch({
    type: "batchEnd",
    total: counted,
    ok: tally.ok,
    error: tally.error,
    limit: tally.limit,
    aborted: tally.aborted,
    skipped: tally.skipped,
    notRun: counted === null ? null : Math.max(0, counted - tally.skipped - finished),
    usage: tally.usage,
    ...(tally.costUsd !== undefined ? { costUsd: round6(tally.costUsd) } : {}),
    durationMs: Math.round(elapsed()),
    exitCode: code,
    ...(writeFailure ? { failure: writeFailure } : {}),
  });
  return code;
}

/** The result line of a bad input line (see ../../batch/runner.ts). */
function badLineResult(error: InputLineError, id: string): BatchResult {
  return { id, runId: null, status: "error", stopReason: "error", text: "", usage: zeroUsage(), durationMs: 0, error: error.message, line: error.line };
}

/** The batch's flags, checked; problems are collected, reported with the spec's. */
function batchFlags(argv: Record<string, unknown>, io: CliIo, problems: string[]): BatchFlags {
  const input = argv.input === undefined ? "" : argv.input === STDIN_MARK ? "-" : String(argv.input);
  if (input === "") problems.push("name the input file: yiem batch INPUT.jsonl -o RESULTS.jsonl (- reads stdin)");
  const output = argv.output === undefined ? "" : String(argv.output);
  if (output === "") problems.push("name the results file with -o RESULTS.jsonl");
  else {
    const problem = writtenFileProblem(resolve(io.cwd, output), "results file");
    if (problem) problems.push(problem);
  }
  const count = (flag: string, fallback: number, min: number, max: number) => {
    const value = argv[flag];
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`--${flag} ${JSON.stringify(String(value))}: use a whole number from ${min} to ${max}`);
      return fallback;
    }
    return n;
  };
  const duration = (flag: string, fallback: number) => {
    if (argv[flag] === undefined) return fallback;
    try {
      return parseDuration(String(argv[flag]));
    } catch (error) {
      problems.push(`--${flag}: ${(error as Error).message}`);
      return fallback;
    }
  };
  let rpm = 0;
  if (argv.rate !== undefined) {
    rpm = Number(argv.rate);
    if (!Number.isFinite(rpm) || rpm <= 0) {
      problems.push(`--rate ${JSON.stringify(String(argv.rate))}: use requests per minute, a number above 0`);
      rpm = 0;
    }
  }
  let shard: Shard | undefined;
  if (argv.shard !== undefined) {
    try {
      shard = parseShard(String(argv.shard), io.env);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  const flags: BatchFlags = {
    input: input === "-" || input === "" ? input : resolve(io.cwd, input),
    output: output === "" ? "" : resolve(io.cwd, output),
    concurrency: count("concurrency", DEFAULT_CONCURRENCY, 1, MAX_CONCURRENCY),
    rpm,
    batchTimeoutMs: duration("batch-timeout", 0),
    graceMs: duration("grace", DEFAULT_GRACE_MS),
    ...(shard ? { shard } : {}),
    resume: argv.resume === true,
    skipBadLines: argv["skip-bad-lines"] === true,
    check: argv.check !== false,
    fullCheck: argv["full-check"] === true,
  };
  if (flags.input !== "" && flags.input !== "-" && flags.output !== "" && sameFile(flags.input, flags.output)) problems.push("the input and the results file are the same file: name another -o");
  if (flags.input !== "" && flags.input !== "-") {
    problems.push(...inputFileProblem(flags.input, input));
  }
  return flags;
}
