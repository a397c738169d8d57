// Scale-out pieces of `sbxtrace mcp --http` (issue 19 part 3, docs/deploy.md): shard names in
// session ids, the Sbx-Session / Mcp-Param-Session-Id routing headers, and --http-stateless,
// where any server answers any request of an MCP session it never initialized.  The SDK
// client where it can say what we mean, raw fetch where the headers are the point.
//   SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/shard.test.mjs

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, existsSync, rmSync, realpathSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.SBXTRACE_BIN || join(HERE, '../../build/cli/sbxtrace'));
const T = { timeout: 300_000 };
const CALL = { timeout: 120_000 };
const SHARDED = (s) => new RegExp(`^sbx_${s}_[0-9A-Za-z]{24}$`);

function tempRoot() {
  return realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-shard-test-')));
}

async function startServer(args) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN} (set SBXTRACE_BIN)`);
  const proc = spawn(BIN, ['mcp', '--http', '127.0.0.1:0', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let buf = '';
  const url = await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no "listening on" line; stderr:\n${buf}`)), 30_000);
    proc.stderr.on('data', (d) => {
      buf += String(d);
      const m = buf.match(/^listening on (http:\/\/\S+\/mcp)\n/);
      if (m) { clearTimeout(timer); ok(m[1]); } else if (buf.includes('\n')) { clearTimeout(timer); fail(new Error(buf)); }
    });
    proc.on('exit', (c, s) => { clearTimeout(timer); fail(new Error(`server exited (${c ?? s}): ${buf}`)); });
  }).catch((e) => { proc.kill('SIGKILL'); throw e; });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  return { url, stop };
}

// The client side of routing: a fetch that copies the session_id of a tools/call into the
// Sbx-Session header (what docs/deploy.md asks of clients behind a router).
export function sbxSessionFetch(base = fetch) {
  return (url, init = {}) => {
    try {
      const msg = JSON.parse(init.body);
      const sid = msg?.method === 'tools/call' ? msg.params?.arguments?.session_id : undefined;
      if (typeof sid === 'string') {
        const h = new Headers(init.headers);
        h.set('Sbx-Session', sid);
        init = { ...init, headers: h };
      }
    } catch { /* not JSON: GET, DELETE */ }
    return base(url, init);
  };
}

async function connect(url, transportOpts = {}) {
  const client = new Client({ name: 'sbxtrace-shard-tests', version: '0.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(url), transportOpts);
  await client.connect(transport, CALL);
  return { client, transport };
}

async function tool(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, CALL);
  return r;
}

async function withServers(specs, fn) {
  const root = tempRoot();
  const servers = [];
  try {
    for (const [i, args] of specs.entries())
      servers.push(await startServer(['--data-dir', join(root, `data${i}`), ...args]));
    return await fn({ root, servers });
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

let rpcId = 100;
async function rpc(url, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, ...body }),
  });
  const text = await res.text();
  let json;
  try {
    // an SSE answer (a tools/call, Accept lists text/event-stream): its last event
    json = /text\/event-stream/.test(res.headers.get('content-type') || '')
      ? JSON.parse(text.split('\n').filter((l) => l.startsWith('data: ')).at(-1).slice(6))
      : JSON.parse(text);
  } catch { json = undefined; }
  return { status: res.status, headers: res.headers, text, json };
}

const callBody = (name, args) => ({ method: 'tools/call', params: { name, arguments: args } });

test('--shard: ids are sbx_SHARD_ and 24 base62; both forms survive a restart under another shard', T, async () => {
  const root = tempRoot();
  const data = join(root, 'data');
  try {
    let srv = await startServer(['--data-dir', data, '--shard', 's7']);
    let { client } = await connect(srv.url);
    const r = await tool(client, 'code_create_sandbox', {});
    const sid = r.structuredContent.session_id;
    assert.match(sid, SHARDED('s7'));
    const e = await tool(client, 'code_execute', { session_id: sid, language: 'shell', code: 'echo hi > f; cat f' });
    assert.notEqual(e.isError, true, JSON.stringify(e));
    assert.equal(e.structuredContent.stdout, 'hi\n');
    // the directory is the id, under the tenant
    assert.deepEqual(readdirSync(join(data, 'local')), [sid]);
    await client.close();
    await srv.stop();

    // restarted without a shard: the old sharded session is still there, new ids are plain
    srv = await startServer(['--data-dir', data]);
    ({ client } = await connect(srv.url));
    const rd = await tool(client, 'code_read_file', { session_id: sid, path: 'f' });
    assert.equal(rd.structuredContent.content, 'hi\n');
    const plain = (await tool(client, 'code_create_sandbox', {})).structuredContent.session_id;
    assert.match(plain, /^sbx_[0-9A-Za-z]{24}$/);
    // ids that only look like ours are unknown sessions, and never paths
    for (const bad of ['sbx_S7_' + 'a'.repeat(24), 'sbx_.._' + 'a'.repeat(24), 'sbx__' + 'a'.repeat(24),
      'sbx_' + 'x'.repeat(17) + '_' + 'a'.repeat(24), 'sbx_s7_' + 'a'.repeat(23) + '/', 'sbx_s7_' + 'a'.repeat(24)]) {
      const x = await tool(client, 'code_read_file', { session_id: bad, path: 'f' });
      assert.equal(x.isError, true, bad);
      assert.match(JSON.stringify(x.content), /unknown|session/i, bad);
    }
    await client.close();
    await srv.stop();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('--shard and server.shard refuse names that are not [a-z0-9]{1,16}', T, () => {
  const root = tempRoot();
  try {
    for (const bad of ['S1', 's-1', '', 'a'.repeat(17), '../x']) {
      const r = spawnSync(BIN, ['mcp', '--http', '127.0.0.1:0', '--data-dir', join(root, 'd'), '--shard', bad], { encoding: 'utf8', timeout: 30_000 });
      assert.notEqual(r.status, 0, bad);
      assert.match(r.stderr, /--shard/, bad);
    }
    const cfg = join(root, 'c.toml');
    writeFileSync(cfg, '[server]\nshard = "Shard-1"\n');
    const r = spawnSync(BIN, ['mcp', '--http', '127.0.0.1:0', '--data-dir', join(root, 'd'), '--config', cfg], { encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /c\.toml:2:\d+: server\.shard: must be 1 to 16 lowercase letters and digits/);
    const r2 = spawnSync(BIN, ['mcp', '--data-dir', join(root, 'd'), '--http-stateless'], { encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(r2.status, 0);
    assert.match(r2.stderr, /--http-stateless needs --http/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('server.shard and server.http_stateless from the config', T, async () => {
  const root = tempRoot();
  const cfg = join(root, 'c.toml');
  writeFileSync(cfg, `[server]\ndata_dir = "${join(root, 'data')}"\nshard = "pod3"\nhttp_stateless = true\n`);
  const srv = await startServer(['--config', cfg]);
  try {
    const r = await rpc(srv.url, callBody('code_create_sandbox', {}));
    assert.equal(r.status, 200, r.text);
    assert.match(r.json.result.structuredContent.session_id, SHARDED('pod3'));
  } finally {
    await srv.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test('--http-stateless: an MCP session initialized on one server goes on on another', T, async () => {
  await withServers([['--shard', 'a', '--http-stateless'], ['--shard', 'b', '--http-stateless'], ['--shard', 'c']],
    async ({ servers: [a, b, c] }) => {
      const { client: ca, transport: ta } = await connect(a.url);
      const mcpSid = ta.sessionId;
      assert.ok(mcpSid, 'initialize gave an Mcp-Session-Id');
      const sid = (await tool(ca, 'code_create_sandbox', {})).structuredContent.session_id;
      assert.match(sid, SHARDED('a'));

      // the same MCP session on b, which never saw its initialize: the SDK reconnects
      // with the session id and does not initialize again
      const { client: cb, transport: tb } = await connect(b.url, { sessionId: mcpSid });
      assert.equal(tb.sessionId, mcpSid);
      const tools = await cb.listTools(undefined, CALL);
      assert.ok(tools.tools.some((t) => t.name === 'code_execute'));
      const sidB = (await tool(cb, 'code_create_sandbox', {})).structuredContent.session_id;
      assert.match(sidB, SHARDED('b'));
      const e = await tool(cb, 'code_execute', { session_id: sidB, language: 'python', code: 'print(6*7)' });
      assert.equal(e.structuredContent.stdout, '42\n');
      assert.equal(tb.sessionId, mcpSid, 'b echoed the client its own Mcp-Session-Id');
      // a's sandbox session is a's: on b it is unknown (what a router's mistake looks like)
      const x = await tool(cb, 'code_execute', { session_id: sid, language: 'shell', code: 'true' });
      assert.equal(x.isError, true);

      // c is not stateless: 404, as before
      const r = await rpc(c.url, { method: 'tools/list' }, { 'Mcp-Session-Id': mcpSid });
      assert.equal(r.status, 404);
      await ca.close();
      await cb.close();
    });
});

test('--http-stateless: requests without Mcp-Session-Id, protocol from MCP-Protocol-Version', T, async () => {
  await withServers([['--http-stateless']], async ({ servers: [s] }) => {
    // no initialize, no session: served, and no Mcp-Session-Id handed out
    let r = await rpc(s.url, { method: 'tools/list' });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.json.result.tools.length >= 9);
    assert.equal(r.headers.get('mcp-session-id'), null);
    r = await rpc(s.url, { method: 'ping' }, { 'MCP-Protocol-Version': '2025-06-18' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.result, {});
    r = await rpc(s.url, { method: 'ping' }, { 'MCP-Protocol-Version': '1999-01-01' });
    assert.equal(r.status, 400);
    // a whole session's life in plain POSTs, each on its own
    r = await rpc(s.url, callBody('code_create_sandbox', {}));
    const sid = r.json.result.structuredContent.session_id;
    r = await rpc(s.url, callBody('code_write_file', { session_id: sid, path: 'a.txt', content: 'x' }), { 'Sbx-Session': sid });
    assert.notEqual(r.json.result.isError, true, r.text);
    // answered as an SSE stream when the client asks for one (Accept lists it: rpc() does)
    const res = await fetch(s.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Sbx-Session': sid, 'Mcp-Session-Id': 'made-up-by-the-client' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, ...callBody('code_read_file', { session_id: sid, path: 'a.txt' }) }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /text\/event-stream/);
    assert.equal(res.headers.get('mcp-session-id'), 'made-up-by-the-client');
    const body = await res.text();
    const data = body.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    assert.equal(data.at(-1).id, 7);
    assert.equal(data.at(-1).result.structuredContent.content, 'x');
    // notifications are accepted, DELETE of a session this server never saw is fine
    r = await rpc(s.url, { method: 'notifications/initialized', id: undefined });
    assert.equal(r.status, 202);
    const d = await fetch(s.url, { method: 'DELETE', headers: { 'Mcp-Session-Id': 'never-seen' } });
    assert.equal(d.status, 200);
    // an Mcp-Session-Id that is not visible ASCII is refused
    r = await rpc(s.url, { method: 'ping' }, { 'Mcp-Session-Id': 'x'.repeat(80) });
    assert.equal(r.status, 400);
  });
});

test('without --http-stateless a request of no MCP session is still refused', T, async () => {
  await withServers([[]], async ({ servers: [s] }) => {
    const r = await rpc(s.url, { method: 'tools/list' });
    assert.equal(r.status, 400);
    const d = await fetch(s.url, { method: 'DELETE', headers: { 'Mcp-Session-Id': 'never-seen' } });
    assert.equal(d.status, 404);
  });
});

test('Sbx-Session and Mcp-Param-Session-Id must agree with the arguments (-32020 otherwise)', T, async () => {
  await withServers([['--shard', 's1', '--http-stateless']], async ({ servers: [s] }) => {
    // the SDK client with a fetch that mirrors session_id into Sbx-Session: everything works
    const seen = [];
    const spy = (url, init) => { seen.push(new Headers(init.headers).get('sbx-session')); return fetch(url, init); };
    const { client } = await connect(s.url, { fetch: sbxSessionFetch(spy) });
    const sid = (await tool(client, 'code_create_sandbox', {})).structuredContent.session_id;
    const e = await tool(client, 'code_execute', { session_id: sid, language: 'shell', code: 'echo ok' });
    assert.equal(e.structuredContent.stdout, 'ok\n');
    assert.equal(seen.at(-1), sid);
    await client.close();

    const other = (await rpc(s.url, callBody('code_create_sandbox', {}))).json.result.structuredContent.session_id;
    const exec = callBody('code_execute', { session_id: sid, language: 'shell', code: 'echo ran >> /workspace/log' });
    // mismatches: 400, JSON-RPC -32020 with the request's id, and nothing ran
    for (const h of [{ 'Sbx-Session': other }, { 'Mcp-Param-Session-Id': other },
      { 'Sbx-Session': sid, 'Mcp-Param-Session-Id': other }]) {
      const r = await rpc(s.url, exec, h);
      assert.equal(r.status, 400, JSON.stringify(h));
      assert.equal(r.json.error.code, -32020);
      assert.match(r.json.error.message, /header mismatch/);
      assert.equal(r.json.id, rpcId);
    }
    // Mcp-Param-Session-Id mirrors the argument: absent argument, present header = mismatch
    let r = await rpc(s.url, callBody('code_execute', { language: 'shell', code: 'true' }), { 'Mcp-Param-Session-Id': sid });
    assert.equal(r.status, 400);
    // Sbx-Session without a session_id argument is a routing hint only
    r = await rpc(s.url, callBody('code_create_sandbox', {}), { 'Sbx-Session': sid });
    assert.equal(r.status, 200);
    // agreeing headers: fine
    r = await rpc(s.url, exec, { 'Sbx-Session': sid, 'Mcp-Param-Session-Id': sid });
    assert.equal(r.status, 200, r.text);
    r = await rpc(s.url, callBody('code_read_file', { session_id: sid, path: 'log' }), { 'Sbx-Session': sid });
    assert.equal(r.json.result.structuredContent.content, 'ran\n', 'only the agreeing call ran');
    // other methods ignore the headers
    r = await rpc(s.url, { method: 'tools/list' }, { 'Sbx-Session': other });
    assert.equal(r.status, 200);
  });
});
