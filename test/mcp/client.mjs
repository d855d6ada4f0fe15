// A real MCP client — the official TypeScript SDK — driving `ckpt mcp` over
// stdio: it lists the tools and calls every one against a temporary
// workspace, checking the exact responses.
//
//   node client.mjs CKPT_BINARY SCRATCH_DIR
//
// internal/mcpserver's TestTypeScriptClient builds ckpt and runs this.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [bin, scratch] = process.argv.slice(2);
if (!bin || !scratch) {
  console.error("usage: node client.mjs CKPT_BINARY SCRATCH_DIR");
  process.exit(2);
}

const ws = path.join(scratch, "ws");
const store = path.join(scratch, "store");
fs.mkdirSync(ws, { recursive: true });
const write = (p, s) => {
  fs.mkdirSync(path.dirname(path.join(ws, p)), { recursive: true });
  fs.writeFileSync(path.join(ws, p), s);
};
const read = (p) => fs.readFileSync(path.join(ws, p), "utf8");
const exists = (p) => fs.existsSync(path.join(ws, p));

write("a.txt", "v1\n");
write("b.txt", "b1\n");
write(".gitignore", "*.log\n");
write("debug.log", "log\n");

let checks = 0;

async function start(args, extraEnv, clientOptions, cwd) {
  const transport = new StdioClientTransport({
    command: bin,
    args,
    cwd,
    env: { ...process.env, CKPT_STORE: store, ...extraEnv },
    stderr: "inherit",
  });
  const client = new Client({ name: "ckpt-ts-test", version: "1.0.0" }, clientOptions);
  return { client, connected: client.connect(transport) };
}

function text(res) {
  assert.equal(res.content.length, 1, "one content block");
  assert.equal(res.content[0].type, "text");
  return res.content[0].text;
}

async function ok(client, name, args, want) {
  const res = await client.callTool({ name, arguments: args ?? {} });
  const t = text(res);
  assert.ok(!res.isError, `${name}(${JSON.stringify(args)}) failed: ${t}`);
  if (want instanceof RegExp) {
    assert.match(t, want, `${name}(${JSON.stringify(args)})`);
  } else if (want !== undefined) {
    assert.equal(t, want, `${name}(${JSON.stringify(args)})`);
  }
  checks++;
  return t;
}

async function fails(client, name, args, want) {
  const res = await client.callTool({ name, arguments: args ?? {} });
  const t = text(res);
  assert.equal(res.isError, true, `${name}(${JSON.stringify(args)}) should fail, got: ${t}`);
  if (want instanceof RegExp) {
    assert.match(t, want, `${name}(${JSON.stringify(args)}) error`);
  } else {
    assert.equal(t, want, `${name}(${JSON.stringify(args)}) error`);
  }
  checks++;
  return t;
}

// 1. A server pinned to the workspace, with a fixed clock.
{
  const { client, connected } = await start(["mcp", "--workspace", ws], { CKPT_NOW: "2026-04-23T12:30:00Z" });
  await connected;
  assert.equal(client.getServerVersion().name, "ckpt");
  assert.match(client.getInstructions() ?? "", /snapshot_create/);

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, [
    "checkpoint_diff", "checkpoint_list", "checkpoint_restore", "redo",
    "session_rewind", "session_turns",
    "snapshot_create", "snapshot_delete", "snapshot_diff", "snapshot_list", "snapshot_restore", "undo",
  ]);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const t of tools) {
    assert.ok(t.description.length > 40, `${t.name} has a description`);
    assert.equal(t.inputSchema.type, "object");
  }
  assert.deepEqual(byName.snapshot_create.inputSchema.required, ["name"]);
  assert.ok("description" in byName.snapshot_create.inputSchema.properties);
  assert.deepEqual(byName.snapshot_restore.inputSchema.required, ["name"]);
  assert.deepEqual(byName.checkpoint_restore.inputSchema.required, ["rev"]);
  checks++;

  // The seed's four tools, byte for byte.
  await ok(client, "snapshot_list", {}, "no snapshots");
  const s1 = (await ok(client, "snapshot_create", { name: "s1", description: "initial checkpoint" },
    /^snapshot s1 created: [0-9a-f]{64}$/)).slice(-64);
  write("a.txt", "v2\n");
  const s2 = (await ok(client, "snapshot_create", { name: "s2", description: "before refactor" },
    /^snapshot s2 created: [0-9a-f]{64}$/)).slice(-64);
  await ok(client, "snapshot_list", {},
    `s1\t${s1.slice(0, 12)}\t2026-04-23T12:30:00+00:00\tinitial checkpoint\n` +
    `s2\t${s2.slice(0, 12)}\t2026-04-23T12:30:00+00:00\tbefore refactor`);
  await ok(client, "snapshot_diff", { name: "s1" },
    "diff --git a/a.txt b/a.txt\nindex 626799f..8c1384d 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v1\n+v2\n");
  await ok(client, "snapshot_diff", { name: "s2" }, "no differences");

  write("b.txt", "b2\n");
  write("new/dir/c.txt", "c\n");
  write("debug.log", "log 2\n");
  await ok(client, "snapshot_restore", { name: "s1" }, "restored snapshot s1 (3 file(s) changed):\na.txt\nb.txt\nnew/dir/c.txt");
  assert.equal(read("a.txt"), "v1\n");
  assert.equal(read("b.txt"), "b1\n");
  assert.ok(!exists("new"), "emptied directories are pruned");
  assert.equal(read("debug.log"), "log 2\n", "ignored files are never touched");

  // undo / redo.
  await ok(client, "undo", {}, /^undo: now at [0-9a-f]{12} \(3 file\(s\) changed\):\na\.txt\nb\.txt\nnew\/dir\/c\.txt$/);
  assert.equal(read("b.txt"), "b2\n");
  assert.equal(read("new/dir/c.txt"), "c\n");
  await ok(client, "redo", {}, `redo: now at ${s1.slice(0, 12)} (3 file(s) changed):\na.txt\nb.txt\nnew/dir/c.txt`);
  assert.equal(read("a.txt"), "v1\n");

  // The other tools.
  const rows = (await ok(client, "checkpoint_list", {})).split("\n");
  assert.ok(rows.length >= 3);
  for (const r of rows) assert.equal(r.split("\t").length, 6, `row ${r}`);
  assert.ok(rows.some((r) => r.startsWith(s1.slice(0, 12) + "\t") && r.includes("HEAD") && r.endsWith("\tinitial checkpoint")));
  await ok(client, "checkpoint_list", { limit: 1 }, /^[0-9a-f]{12}\t[^\n]*$/);
  await ok(client, "checkpoint_list", { kind: "turn" }, "no checkpoints");
  await ok(client, "checkpoint_diff", {}, "no differences");
  await ok(client, "checkpoint_diff", { from: "s1", to: "s2" }, /^diff --git a\/a\.txt b\/a\.txt\n[\s\S]*\n-v1\n\+v2\n$/);
  await ok(client, "checkpoint_diff", { from: "s1", to: "s2", paths: ["b.txt"] }, "no differences");
  await ok(client, "checkpoint_restore", { rev: "s2", paths: ["a.txt"] }, `restored ${s2.slice(0, 12)} (1 file(s) changed):\na.txt`);
  assert.equal(read("a.txt"), "v2\n");
  await ok(client, "snapshot_delete", { name: "s2" }, "snapshot s2 deleted");
  await ok(client, "snapshot_list", {}, `s1\t${s1.slice(0, 12)}\t2026-04-23T12:30:00+00:00\tinitial checkpoint`);

  // Errors: tool errors with the CLI's text; nothing touched.
  await fails(client, "snapshot_restore", { name: "nope" },
    'ckpt: snapshot restore: no snapshot named "nope"\nckpt: hint: `ckpt snapshot list` (MCP: snapshot_list) shows the snapshots');
  await fails(client, "snapshot_create", { name: ".secret" },
    'ckpt: snapshot create: invalid snapshot name ".secret": it starts with "."; a name must match ^[A-Za-z0-9_][A-Za-z0-9_.-]*$');
  await fails(client, "snapshot_create", { name: "s1" },
    `ckpt: snapshot create: snapshot "s1" already exists (checkpoint ${s1.slice(0, 12)})\nckpt: hint: replace it with --force (MCP: force: true), or pick another name`);
  await ok(client, "snapshot_create", { name: "s1", force: true, description: "forced" }, /^snapshot s1 created: [0-9a-f]{64}$/);
  await fails(client, "snapshot_diff", { name: "foo/bar" }, /^ckpt: snapshot diff: invalid snapshot name "foo\/bar": it contains the path separator '\/'/);
  await fails(client, "checkpoint_restore", { rev: "nosuch" }, /^ckpt: unknown revision "nosuch"/);
  await fails(client, "redo", {}, /^ckpt: nothing to redo\nckpt: hint: /);
  assert.equal(read("a.txt"), "v2\n");

  // Sessions: a turn recorded with the CLI (as agent hooks do), then listed
  // and rewound over MCP.
  await fails(client, "session_turns", {}, /^ckpt: no session\nckpt: hint: /);
  const env = { ...process.env, CKPT_STORE: store, CKPT_NOW: "2026-04-23T12:30:00Z" };
  execFileSync(bin, ["-C", ws, "session", "new", "--id", "s-ts", "-t", "ts"], { env });
  execFileSync(bin, ["-C", ws, "turn", "begin", "-m", "write c"], { env });
  write("c.txt", "c\n");
  fs.rmSync(path.join(ws, "b.txt"));
  execFileSync(bin, ["-C", ws, "turn", "end"], { env });
  await ok(client, "session_turns", {}, "session s-ts\n1\t2026-04-23T12:30:00+00:00\t+1 ~0 -1\twrite c");
  await ok(client, "session_rewind", { turn: 1, dry_run: true }, "would rewind code to the start of turn 1 (2 file(s) changed):\nb.txt\nc.txt");
  assert.ok(exists("c.txt"));
  await ok(client, "session_rewind", { turn: 1, scope: "both" },
    /^rewound code to the start of turn 1 \(2 file\(s\) changed\):\nb\.txt\nc\.txt\nrewound the conversation to before turn 1 \(1 message\(s\), 1 turn\(s\) removed\); its prompt:\nwrite c$/);
  assert.ok(!exists("c.txt"));
  assert.equal(read("b.txt"), "b1\n");
  await fails(client, "session_rewind", { turn: 1 }, /^ckpt: session s-ts has no turns yet$/);
  await client.close();
}

// 2. No --workspace: the server works in the client's first file:// root.
{
  const other = path.join(scratch, "other");
  fs.mkdirSync(other, { recursive: true });
  fs.writeFileSync(path.join(other, "x.txt"), "x\n");
  const { client, connected } = await start(["mcp"], { CKPT_STORE: path.join(scratch, "store2") },
    { capabilities: { roots: { listChanged: true } } }, scratch);
  client.setRequestHandler(ListRootsRequestSchema, async () => ({
    roots: [{ uri: pathToFileURL(other).href, name: "other" }],
  }));
  await connected;
  await ok(client, "snapshot_create", { name: "r1" }, /^snapshot r1 created: [0-9a-f]{64}$/);
  fs.writeFileSync(path.join(other, "x.txt"), "changed\n");
  await ok(client, "snapshot_diff", { name: "r1" }, /^diff --git a\/x\.txt b\/x\.txt\n[\s\S]*\n-x\n\+changed\n$/);
  await ok(client, "snapshot_restore", { name: "r1" }, "restored snapshot r1 (1 file(s) changed):\nx.txt");
  assert.equal(fs.readFileSync(path.join(other, "x.txt"), "utf8"), "x\n");
  await client.close();
}

console.log(`ok: ${checks} checks against ckpt mcp`);
