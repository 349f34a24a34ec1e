// median wall and cpu (user+sys) over N runs, interleaved
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
const cmds = JSON.parse(process.argv[2]); const N = Number(process.argv[3] ?? 15);
const wall = cmds.map(() => []), cpu = cmds.map(() => []);
for (let i = 0; i < N; i++) cmds.forEach((c, j) => {
  const t = performance.now();
  spawnSync("/usr/bin/time", ["-f", "%U %S", "-o", "/tmp/_c.txt", ...c], { stdio: "ignore", cwd: "/work/main", env: { ...process.env, YIEM_CACHE_DIR: "/tmp/yiem-probe-cache2" } });
  wall[j].push(performance.now() - t);
  const [u, s] = readFileSync("/tmp/_c.txt", "utf8").trim().split("\n").pop().split(" ").map(Number); cpu[j].push((u + s) * 1000);
});
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[s.length >> 1]; };
cmds.forEach((c, j) => console.log(`wall ${med(wall[j]).toFixed(0).padStart(5)}  cpu ${med(cpu[j]).toFixed(0).padStart(5)}   ${c.slice(1).join(" ").slice(0, 90)}`));
