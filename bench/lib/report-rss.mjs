/**
 * Preload for machines without GNU time: at exit, writes this process's max RSS in KiB and its
 * minor page faults (`process.resourceUsage()`) to the file named by YIEM_BENCH_RSS_FILE, as GNU
 * time's "%M %R" would.
 */
import { writeFileSync } from "node:fs";

const file = process.env.YIEM_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, `${process.resourceUsage().maxRSS} ${process.resourceUsage().minorPageFault}\n`));
