// Drives `git-ideate mcp` with the official MCP TypeScript SDK client and
// prints one JSON object of what it measured. Arguments: the SDK's
// node_modules directory, the binary, the repository, the pid file the
// sleeping test writes.
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";

const [nodeModules, bin, dir, pidfile] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, "x.js"));
const { Client } = await import(require.resolve("@modelcontextprotocol/sdk/client/index.js"));
const { StdioClientTransport } = await import(require.resolve("@modelcontextprotocol/sdk/client/stdio.js"));

const out = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function session() {
  const transport = new StdioClientTransport({ command: bin, args: ["mcp"], cwd: dir, env: process.env, stderr: "ignore" });
  const client = new Client({ name: "sdk-test", version: "0" });
  await client.connect(transport);
  return client;
}
async function timed(fn) {
  const t = Date.now();
  await fn();
  return Date.now() - t;
}
const text = (res) => JSON.parse(res.content[0].text);

const c = await session();
out.tools = (await c.listTools()).tools.length;

// A long test_run: answers beside it, progress, a cancel at 5 s.
let progress = 0;
const abort = new AbortController();
const start = Date.now();
const run = c.callTool({ name: "test_run", arguments: { task: "S1-01/T1", timeout_s: 120 } }, undefined,
  { signal: abort.signal, timeout: 600000, onprogress: () => { progress++; } });
run.then(() => { out.runResolved = true; }, (e) => { out.runRejected = String(e && e.name); });
while (!fs.existsSync(pidfile)) {
  if (Date.now() - start > 90000) throw new Error("the run never started its test");
  await sleep(20);
}
await sleep(50);
const [pid, pgid] = fs.readFileSync(pidfile, "utf8").trim().split(" ").map(Number);
fs.unlinkSync(pidfile);
out.pingMs = await timed(() => c.ping());
out.listMs = await timed(() => c.listTools());
out.readMs = await timed(() => c.callTool({ name: "record_read", arguments: {} }));
while (progress === 0 && Date.now() - start < 60000) await sleep(20);
out.progress = progress;
await sleep(Math.max(0, start + 5000 - Date.now()));
abort.abort("test");
await sleep(2000);
const alive = (p) => { try { process.kill(p, 0); return true; } catch { return false; } };
out.groupAlive = alive(-pgid);
out.testAlive = alive(pid);
out.pingAfterCancelMs = await timed(() => c.ping());

// A 5 MiB argument: a typed refusal, and the session goes on.
const big = "x".repeat(5 << 20);
const refused = await c.callTool({ name: "record_append", arguments: { kind: "finding", claim: big, content: "c" } });
out.bigIsError = !!refused.isError;
out.bigCode = text(refused).code;
out.bigMessage = text(refused).message;
out.afterBig = text(await c.callTool({ name: "record_read", arguments: {} })).ok;
const appended = await c.callTool({ name: "record_append", arguments: { kind: "finding", claim: "after", content: "c" } });
out.appendOk = text(appended).ok;
out.structured = "structuredContent" in appended;
await c.close();

// A new session reads what the first wrote.
const c2 = await session();
out.newSessionRecords = text(await c2.callTool({ name: "record_read", arguments: {} })).records.length;
await c2.close();
console.log(JSON.stringify(out));
process.exit(0);
