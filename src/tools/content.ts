/**
 * Content parts as text, the one rule for every reader (the `tools call` answer, pretty events,
 * `sessions show`, `{{result}}` templates, a terminating result's text, the tool message sent to a
 * model): text parts joined by "\n"; an image shown as `[image <mimeType>, <n> bytes]` for people
 * (`images: "placeholder"`, the default) or left out where the text stands for the parts' text
 * alone (`"omit"`: the model gets the image another way, or the text is a run's answer).
 */
import type { ContentPart } from "./types.js";

export function contentText(content: readonly ContentPart[], images: "placeholder" | "omit" = "placeholder"): string {
  return content
    .flatMap((part) => (part.type === "text" ? [part.text] : images === "omit" ? [] : [imagePlaceholder(part.mimeType, part.data)]))
    .join("\n");
}

/** `[image <mimeType>, <n> bytes]`, n decoded from the base64 length. */
function imagePlaceholder(mimeType: string, data: string): string {
  return `[image ${mimeType}, ${Math.floor((data.length * 3) / 4)} bytes]`;
}
