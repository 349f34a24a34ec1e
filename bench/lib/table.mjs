/** Table rows and printing. A row: { name, baseline, measured, result, budget, pass } (strings, pass a boolean). */

export const ms = (v) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(v < 10 ? 2 : 0)} ms`);

/** measured / baseline ≤ budget. */
export function ratioRow(name, baselineMs, measuredMs, budget) {
  const ratio = measuredMs / baselineMs;
  return { name, baseline: ms(baselineMs), measured: ms(measuredMs), result: `${ratio.toFixed(2)}×`, budget: `≤ ${budget}×`, pass: ratio <= budget };
}

/** An absolute limit on the measured value; the baseline is shown for scale. `pass: null`: a row for scale, no budget. */
export function limitRow(name, baseline, measured, result, budget, pass) {
  return { name, baseline, measured, result, budget, pass };
}

export function formatTable(rows) {
  const header = ["benchmark", "baseline", "measured (median)", "ratio / difference", "budget", "pass"];
  const cells = rows.map((r) => [r.name, r.baseline, r.measured, r.result, r.budget, r.pass === null ? "—" : r.pass ? "yes" : "NO"]);
  const lines = [header, header.map(() => "---"), ...cells].map((r) => `| ${r.join(" | ")} |`);
  return lines.join("\n");
}
