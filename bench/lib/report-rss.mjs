/**
 * Preload for machines without GNU time: at exit, writes this process's max RSS in KiB and its
 * minor page faults (`process.resourceUsage()`) to the file named by YIEM_BENCH_RSS_FILE, as GNU
 * time's "%M %R" would. It writes from process.reallyExit (an exit by process.exit) and on
 * 'beforeExit' (an event loop that ran dry), not from an 'exit' listener: yiem's exit bound
 * starts a thread for a listener that is not its own (src/exit-listeners.ts).
 */
import { writeFileSync } from "node:fs";

const file = process.env.YIEM_BENCH_RSS_FILE;
if (file) {
  const write = () => writeFileSync(file, `${process.resourceUsage().maxRSS} ${process.resourceUsage().minorPageFault}\n`);
  const reallyExit = process.reallyExit;
  process.reallyExit = function (code) {
    write();
    return reallyExit.call(process, code);
  };
  process.on("beforeExit", write);
}
