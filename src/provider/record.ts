/**
 * `--record FILE`: wraps a provider and writes every assistant turn it returns as a replay file
 * (JSONL, the format `replay:FILE` reads).
 * Rules:
 * - The whole file is rewritten after each turn, atomically (a temp file in the same folder,
 *   then rename), so an interrupted run leaves the turns so far and never a half file. A new file
 *   is mode 0600; an existing one keeps its mode (private-file.ts).
 * - Only the assistant's turns are stored (content, tool calls, usage, finish reason): no
 *   request, no headers, no keys; `redact` (when given) hides secret values in them.
 * - A write failure does not break the run; `flush()` waits for pending writes and throws it.
 */
import { resolve } from "node:path";
import { writePrivateFileAtomic } from "../private-file.js";
import type { ModelRequest, ModelResponse, Provider } from "./types.js";
import type { RecordedTurn } from "./replay.js";

export type RecordingProvider = Provider & {
  /** Wait for pending writes (creating the file if no turn was recorded); throws a write failure. */
  flush(): Promise<void>;
};

export interface RecorderOptions {
  /** Applied to each recorded turn before it is written (e.g. to hide secret values). */
  redact?: <T>(value: T) => T;
  /** The folder a relative `file` is written in (the CLI's io.cwd); default the process's. Messages name `file` as given. */
  cwd?: string;
}

export function createRecorder(inner: Provider, file: string, options: RecorderOptions = {}): RecordingProvider {
  const redact = options.redact ?? (<T>(value: T) => value);
  const path = options.cwd === undefined ? file : resolve(options.cwd, file);
  const lines: string[] = [];
  let writes: Promise<void> = Promise.resolve();
  let failure: unknown;
  let written = false;

  const save = () => {
    const text = lines.map((line) => `${line}\n`).join("");
    writes = writes.then(() =>
      writePrivateFileAtomic(path, text).then(
        () => {
          written = true;
        },
        (error) => {
          failure ??= error;
        },
      ),
    );
    return writes;
  };

  const recorder: RecordingProvider = {
    model: inner.model,
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const response = await inner.complete(request);
      lines.push(JSON.stringify(redact(toRecordedTurn(response))));
      await save();
      return response;
    },
    async flush() {
      await writes;
      if (!written && failure === undefined) await save();
      if (failure !== undefined) {
        throw new Error(`could not write the recording ${file}: ${(failure as Error).message ?? String(failure)}`);
      }
    },
  };
  if (inner.describeRequest) recorder.describeRequest = inner.describeRequest.bind(inner);
  return recorder;
}

/** A response in the replay file's form. */
export function toRecordedTurn(response: ModelResponse): RecordedTurn {
  const turn: RecordedTurn = {
    content: response.message.content,
    toolCalls: response.message.toolCalls.map(({ id, name, arguments: args }) => ({ id, name, arguments: args })),
    usage: { ...response.usage },
    finishReason: response.finishReason,
  };
  if (response.message.toolCallBlock !== undefined) turn.toolCallBlock = response.message.toolCallBlock;
  return turn;
}
