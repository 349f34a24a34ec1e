/**
 * The raw round trip: `node raw-client.mjs URL BODIES_FILE` posts each recorded request body
 * (a JSON array of strings) to URL/chat/completions in order with plain `fetch` (keep-alive),
 * reads each reply to the end, and prints the mean milliseconds per request as JSON, not
 * counting the first request (connection set-up, as the warm-up of a run).
 */
import { readFileSync } from "node:fs";

const [url, file] = process.argv.slice(2);
const bodies = JSON.parse(readFileSync(file, "utf8"));
const post = async (body) => {
  const res = await fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body,
  });
  await res.text();
};
await post(bodies[0]);
const started = performance.now();
for (const body of bodies.slice(1)) await post(body);
const ms = (performance.now() - started) / (bodies.length - 1);
process.stdout.write(`${JSON.stringify({ msPerRequest: ms })}\n`);
