/**
 * The inputs of `yiem run` that may make it wait (./run.ts): piped stdin and a stored session
 * another run holds; and the rule that a history may not call a tool the spec refuses.
 */
import type { ResolvedSpec } from "../../config/types.js";
import type { ChatMessage } from "../../provider/types.js";
import { describeHolder } from "../../sessions/lock.js";
import { UsageError } from "../../errors.js";
import type { PromptInput } from "../prompt-input.js";
import { openRunSession, type sessionRequest } from "../run-session.js";
import { deniedCallProblem } from "../session.js";
import { readStdin, type StdinResult } from "../stdin.js";
import { whileWaiting, type RunContext } from "./run-context.js";

/**
 * stdin for the prompt (./stdin.ts). In the pretty view, a wait of over a second is explained;
 * a deadline or signal that ends the wait says, in agentEnd, that stdin was being waited for.
 */
export async function readPromptStdin(ctx: RunContext, input: PromptInput): Promise<StdinResult> {
  const hasPrompt = input.words.some((word, at) => at !== input.stdinAt && word.trim() !== "");
  const waitingNote = input.stdinMode === "wait"
    ? "waiting for stdin to end (--stdin, or the prompt word -); Ctrl-D ends typed input, Ctrl-C stops"
    : "waiting for stdin to end: pipe the prompt in or give it as words; --no-stdin skips stdin";
  const read = readStdin({
    mode: input.stdinMode,
    graceMs: hasPrompt ? input.graceMs : undefined,
    onWaiting: () => ctx.sink.log(waitingNote),
    io: ctx.io,
  });
  return whileWaiting(ctx, read, () => "stdin to end");
}

/**
 * The stored session's history (../run-session.ts), [] when the run uses none. A deadline or
 * signal that ends a wait for another run's lock says so in agentEnd.
 */
export async function openStoredSession(ctx: RunContext, spec: ResolvedSpec, request: ReturnType<typeof sessionRequest>): Promise<ChatMessage[]> {
  let waitingFor: string | undefined;
  const opening = openRunSession(request, spec, {
    signal: ctx.signal,
    dryRun: Boolean(ctx.argv["dry-run"]),
    onId: (id) => {
      ctx.stream.sessionId = id;
    },
    onWaiting: (id, holder) => {
      waitingFor = `session ${id} (in use by ${describeHolder(holder)})`;
      ctx.sink.log(`waiting for ${waitingFor} to be released; --no-wait fails at once instead`);
    },
  }, ctx.io);
  const session = await whileWaiting(ctx, opening, () => waitingFor);
  if (session) ctx.session = session;
  return session?.history ?? [];
}

/** `history`, unless one of its messages calls a tool `allowed` refuses (a usage error naming `where`). */
export function refuseDeniedCalls(history: ChatMessage[], allowed: (name: string) => boolean, where: string): ChatMessage[] {
  history.forEach((message, at) => {
    const problem = deniedCallProblem(message, allowed);
    if (problem) throw new UsageError(`${where}: messages[${at}]: ${problem}`);
  });
  return history;
}
