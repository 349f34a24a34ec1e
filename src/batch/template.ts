/**
 * `--prompt-template`: `{{name}}` placeholders filled from an item's `vars` (docs/batch.md).
 *
 * Rules:
 * - A placeholder is `{{name}}` (spaces inside the braces allowed), name: a letter or `_`, then
 *   letters, digits, `_`, `.` or `-`. Other text, `{{` included, is kept as it is.
 * - `{{prompt}}` and `{{id}}` are the item's prompt and id unless its vars name them.
 * - A string value is put in as it is, any other value as its JSON text.
 * - A placeholder with no value is an error naming it; the template is checked on every item
 *   before anything runs.
 */
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** The names the template's placeholders use, in order of first use. */
export function templateNames(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]))];
}

/** The template filled from `values`; throws naming the first placeholder without a value. */
export function fillTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(PLACEHOLDER, (_match, name: string) => {
    if (!Object.hasOwn(values, name) || values[name] === undefined) {
      throw new Error(`--prompt-template uses {{${name}}}, which this item's vars do not have`);
    }
    const value = values[name];
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}
