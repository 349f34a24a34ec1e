/**
 * What bin/yiem.js runs (the bundle's `cli` entry, scripts/bundle.mjs): the CLI as a function and
 * the io of the real process it is given there (./host/process-io.ts).
 */
export { main } from "./main.js";
export { processIo } from "./host/process-io.js";
