/** Redaction lives in ../redact.ts (the shared base, used by the provider, the loop and the CLI); re-exported for loop-side callers. */
export { createRedactor, createStreamRedactor, cutText, REDACTED, type Redactor, type StreamRedactor } from "../redact.js";
