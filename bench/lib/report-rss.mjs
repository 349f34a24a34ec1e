/**
 * Preload for machines without GNU time: at exit, writes this process's max RSS in KiB
 * (`process.resourceUsage().maxRSS`) to the file named by YIEM_BENCH_RSS_FILE.
 */
import { writeFileSync } from "node:fs";

const file = process.env.YIEM_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, `${process.resourceUsage().maxRSS}\n`));
