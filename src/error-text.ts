/**
 * The text of anything thrown, for results, events and messages. Rules: an Error (or any object
 * with a `message`) gives its message, a string itself, anything else its JSON (or `String()`);
 * it never throws, also for an Error whose `message` getter throws or a value that cannot be
 * turned into a string: such a value is named by its kind, "(its message could not be read)".
 */
export function messageOf(error: unknown): string {
  try {
    if (error instanceof Error) return error.message;
    if (typeof error === "string") return error;
    return JSON.stringify(error) ?? String(error);
  } catch {
    try {
      return String(error);
    } catch {
      return `${describeKind(error)} (its message could not be read)`;
    }
  }
}

function describeKind(value: unknown): string {
  try {
    const name = (value as { constructor?: { name?: unknown } } | null)?.constructor?.name;
    return typeof name === "string" && name !== "" ? `a thrown ${name}` : "a thrown value";
  } catch {
    return "a thrown value";
  }
}
