const r = () => (process.memoryUsage().rss / 1048576).toFixed(1);
const steps = process.argv.slice(2);
let line = `start ${r()}`;
for (const m of steps) { const t = performance.now(); await import(m); line += ` | ${m} +${(performance.now()-t).toFixed(0)}ms rss ${r()}`; }
console.log(line, "| maxRSS", (process.resourceUsage().maxRSS/1024).toFixed(1));
