import { spawnSync } from "node:child_process";
const cmds = JSON.parse(process.argv[2]);
const res = cmds.map(() => []);
for (let i = 0; i < 15; i++) cmds.forEach((c, j) => { const t = performance.now(); spawnSync(c[0], c.slice(1), { stdio: "ignore", cwd: "/work/main" }); res[j].push(performance.now() - t); });
cmds.forEach((c, j) => { const s = res[j].sort((a, b) => a - b); console.log(s[7].toFixed(0).padStart(5), "ms  min", s[0].toFixed(0).padStart(4), " ", c.slice(1).join(" ").slice(0, 90)); });
