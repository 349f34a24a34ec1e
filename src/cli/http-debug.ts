/**
 * `yiem run --debug` and `YIEM_DEBUG=http` (a comma-separated list naming `http`): every HTTP
 * exchange with the model server becomes a `debug` event of the run (docs/events.md). Exchanges
 * made before the run's emitter is attached wait for it, in order. The events pass through the
 * run's redactor like every other event.
 */
import type { AgentEventBody } from "../loop/types.js";
import type { HttpExchange } from "../provider/http-trace.js";

export interface HttpDebug {
  /** For the provider's `onHttp`; undefined when debugging is off. */
  onHttp?: (exchange: HttpExchange) => void;
  /** Hands over the run's emitter. */
  attach(emit: (body: AgentEventBody) => void): void;
}

/** Whether `--debug` or YIEM_DEBUG of the call's `env` asks for HTTP debug events. */
export function wantsHttpDebug(argv: Record<string, unknown>, env: NodeJS.ProcessEnv): boolean {
  return argv.debug === true || (env.YIEM_DEBUG ?? "").split(",").some((part) => part.trim() === "http");
}

export function httpDebug(argv: Record<string, unknown>, env: NodeJS.ProcessEnv): HttpDebug {
  if (!wantsHttpDebug(argv, env)) return { attach: () => {} };
  let emit: ((body: AgentEventBody) => void) | undefined;
  const waiting: AgentEventBody[] = [];
  return {
    onHttp: (exchange) => {
      const body: AgentEventBody = { type: "debug", kind: "http", ...exchange };
      if (emit) emit(body);
      else waiting.push(body);
    },
    attach: (runEmit) => {
      emit = runEmit;
      for (const body of waiting.splice(0)) runEmit(body);
    },
  };
}
