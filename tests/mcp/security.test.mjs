// Attacks on `sbxtrace mcp` (docs/agents.md), driven through the real server
// with the official SDK client or raw HTTP: a model calling the tools with
// hostile arguments, code in a session working against the server, and
// clients of the HTTP transport that are not who they say.  Each test starts
// its own server with its own data dir.  Run with
//   SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/security.test.mjs
// (tests/mcp/run-tests.sh runs every *.test.mjs here).  Timeouts are upper
// bounds only.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync, existsSync, rmSync, realpathSync, readdirSync, lstatSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.SBXTRACE_BIN || join(HERE, '../../build/cli/sbxtrace'));
const TEST_TIMEOUT = 300_000;
const CALL_TIMEOUT = 120_000;
const START_TIMEOUT = 30_000;
const T = { timeout: TEST_TIMEOUT };
const SESSION_ID = /^sbx_[0-9A-Za-z]{24}$/;

// ---------------------------------------------------------------- helpers
// (the same shapes as tools.test.mjs)

const uniq = () => randomBytes(6).toString('hex');

function tempRoot() {
  return realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-mcp-sec-')));
}

function writeConfig(root, dataDir, extra = '') {
  const file = join(root, 'operator.toml');
  writeFileSync(file, `[server]
data_dir = "${dataDir}"
idle_timeout = "30m"
max_sessions = 200
store_code = "on_error"

[limits]
wall_s = 600
cpu_s = 600
memory_mb = 1024
tasks = 256
disk_mb = 256
output_kb = 1024

[network]
modes = ["none", "loopback"]
${extra}`);
  return file;
}

const TENANTS = `
[[tenant]]
name = "alpha"
token = "alpha-token-${'a'.repeat(32)}"

[[tenant]]
name = "beta"
token = "beta-token-${'b'.repeat(32)}"
`;
const TOK_A = `alpha-token-${'a'.repeat(32)}`;
const TOK_B = `beta-token-${'b'.repeat(32)}`;

// `prefix`: a shell command line the server is started under (e.g. "ulimit -n 128;")
function serverCommand(args, prefix) {
  if (!prefix) return { cmd: BIN, args };
  const quoted = [BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return { cmd: '/bin/sh', args: ['-c', `${prefix} exec ${quoted}`] };
}

async function connectClient(transport) {
  const client = new Client({ name: 'sbxtrace-mcp-security', version: '0.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: CALL_TIMEOUT });
  await client.listTools(undefined, { timeout: CALL_TIMEOUT });
  return client;
}

async function startStdio({ dataDir, config, prefix }) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN} (set SBXTRACE_BIN)`);
  const { cmd, args } = serverCommand(['mcp', '--data-dir', dataDir, '--config', config], prefix);
  const transport = new StdioClientTransport({ command: cmd, args, env: { ...process.env }, stderr: 'pipe' });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  let client;
  try {
    client = await connectClient(transport);
  } catch (e) {
    await transport.close().catch(() => {});
    e.message += `\nserver stderr:\n${stderr.join('')}`;
    throw e;
  }
  return { client, stderr, close: () => client.close() };
}

async function startHttpServer({ dataDir, config }) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN} (set SBXTRACE_BIN)`);
  const proc = spawn(BIN, ['mcp', '--data-dir', dataDir, '--config', config, '--http', '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr = [];
  const url = await new Promise((ok, fail) => {
    let buf = '';
    const timer = setTimeout(() => fail(new Error(`no "listening on" line; stderr:\n${buf}`)), START_TIMEOUT);
    proc.stderr.on('data', (d) => {
      stderr.push(String(d));
      buf += String(d);
      if (buf.includes('\n')) {
        clearTimeout(timer);
        const m = buf.split('\n')[0].match(/^listening on (http:\/\/\S+\/mcp)\s*$/);
        if (m) ok(m[1]);
        else fail(new Error(`unexpected first stderr line: ${JSON.stringify(buf)}`));
      }
    });
    proc.on('error', (e) => { clearTimeout(timer); fail(e); });
    proc.on('exit', (code, sig) => { clearTimeout(timer); fail(new Error(`server exited (${code ?? sig}); stderr:\n${buf}`)); });
  }).catch((e) => { proc.kill('SIGKILL'); throw e; });
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  return { url, proc, stderr, stop };
}

async function withStdio(fn, { configExtra = '', prefix } = {}) {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const config = writeConfig(root, dataDir, configExtra);
  const srv = await startStdio({ dataDir, config, prefix });
  try {
    return await fn({ ...srv, root, dataDir, config });
  } finally {
    await srv.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

async function withHttp(fn, { configExtra = '' } = {}) {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const config = writeConfig(root, dataDir, configExtra);
  const srv = await startHttpServer({ dataDir, config });
  try {
    return await fn({ ...srv, root, dataDir, config });
  } finally {
    await srv.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

async function connectHttp(url, token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  return connectClient(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
}

async function call(client, name, args = {}, timeout = CALL_TIMEOUT) {
  try {
    return { res: await client.callTool({ name, arguments: args }, undefined, { timeout }) };
  } catch (error) {
    return { error };
  }
}

const textOf = (res) => (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const refused = (r) => Boolean(r.error) || r.res?.isError === true;

async function ok(client, name, args) {
  const r = await call(client, name, args);
  assert.ok(!r.error, `${name} threw: ${r.error?.message}`);
  assert.notEqual(r.res.isError, true, `${name} isError: ${textOf(r.res)}`);
  return r.res.structuredContent;
}

async function create(client, args = {}) {
  const sc = await ok(client, 'code_create_sandbox', args);
  assert.match(sc.session_id, SESSION_ID);
  return sc.session_id;
}

async function sh(client, session_id, code, extra = {}) {
  const sc = await ok(client, 'code_execute', { session_id, language: 'shell', code, ...extra });
  assert.equal(sc.exit_code, 0, `shell failed: ${sc.stderr}`);
  return sc;
}

function initBody() {
  return JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
}

// One raw HTTP/1.1 request over a socket: the status code of the answer, or
// 'timeout' when none comes within ms.  `body` may be shorter than the
// Content-Length it claims (the server then has to answer without it).
function rawRequest(url, { headers = {}, body = '', contentLength, ms = 10_000 }) {
  const u = new URL(url);
  return new Promise((ok, fail) => {
    const sock = netConnect({ host: u.hostname, port: Number(u.port) });
    let got = '';
    const timer = setTimeout(() => { sock.destroy(); ok('timeout'); }, ms);
    sock.on('error', (e) => { clearTimeout(timer); if (got) ok(Number(got.split(' ')[1])); else fail(e); });
    sock.on('data', (d) => {
      got += String(d);
      const m = got.match(/^HTTP\/1\.[01] (\d{3})/);
      if (m) { clearTimeout(timer); sock.destroy(); ok(Number(m[1])); }
    });
    sock.on('connect', () => {
      const h = {
        Host: `${u.hostname}:${u.port}`, 'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Content-Length': String(contentLength ?? Buffer.byteLength(body)), ...headers,
      };
      sock.write(`POST ${u.pathname} HTTP/1.1\r\n${Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
      if (body) sock.write(body);
    });
  });
}

function walk(dir, out = []) {
  let names;
  try { names = readdirSync(dir); } catch { return out; }
  for (const n of names) {
    const p = join(dir, n);
    out.push(p);
    try { if (lstatSync(p).isDirectory()) walk(p, out); } catch { /* raced */ }
  }
  return out;
}

// ---------------------------------------------------------------- HTTP transport

describe('http: who may talk to the server', () => {
  test('a Host or Origin that only begins with "127." is not loopback (DNS rebinding)', T, () => withHttp(async ({ url }) => {
    const port = new URL(url).port;
    // an attacker's name that its DNS answers with 127.0.0.1: a page on it must not
    // reach the tokenless loopback server
    for (const name of ['127.attacker.example', '127.0.0.1.attacker.example', '127.1.example']) {
      let status = await rawRequest(url, { headers: { Host: `${name}:${port}` }, body: initBody() });
      assert.equal(status, 403, `Host ${name} was accepted as loopback (${status})`);
      status = await rawRequest(url, { headers: { Origin: `http://${name}:${port}` }, body: initBody() });
      assert.equal(status, 403, `Origin http://${name} was accepted as loopback (${status})`);
    }
    // real loopback names and addresses still work
    for (const name of ['127.0.0.1', '127.1.2.3', 'localhost', '[::1]']) {
      const status = await rawRequest(url, { headers: { Host: `${name}:${port}`, Origin: `http://${name}:${port}` }, body: initBody() });
      assert.equal(status, 200, `loopback ${name} refused (${status})`);
    }
  }));

  test('an unauthenticated or foreign request is refused before its body is read', T, () => withHttp(async ({ url }) => {
    // headers only, a body promised and never sent: the refusal must not wait for it
    let status = await rawRequest(url, { contentLength: 3 << 20 });
    assert.equal(status, 401, `no token: ${status}`);
    status = await rawRequest(url, { headers: { Authorization: 'Bearer wrong-token-wrong-token' }, contentLength: 3 << 20 });
    assert.equal(status, 401, `wrong token: ${status}`);
    status = await rawRequest(url, { headers: { Authorization: `Bearer ${TOK_A}`, Origin: 'http://evil.example' }, contentLength: 3 << 20 });
    assert.equal(status, 403, `foreign origin: ${status}`);
    // a body announced over the limit is refused from its Content-Length
    status = await rawRequest(url, { headers: { Authorization: `Bearer ${TOK_A}` }, contentLength: 1 << 30 });
    assert.equal(status, 413, `1 GiB body: ${status}`);
    // and the server still serves its tenants
    const a = await connectHttp(url, TOK_A);
    try {
      await create(a);
    } finally {
      await a.close().catch(() => {});
    }
  }, { configExtra: TENANTS }));

  test('another tenant\'s or a made-up Mcp-Session-Id is unknown', T, () => withHttp(async ({ url }) => {
    const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${TOK_A}` }, body: initBody() });
    assert.equal(res.status, 200);
    const mcpSid = res.headers.get('mcp-session-id');
    assert.ok(mcpSid);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    for (const [tok, sid, want] of [[TOK_B, mcpSid, 404], [TOK_A, 'f'.repeat(32), 404], [TOK_A, mcpSid, 200]]) {
      const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${tok}`, 'Mcp-Session-Id': sid, 'MCP-Protocol-Version': '2025-11-25' }, body: list });
      assert.equal(r.status, want, `tools/list with ${tok === TOK_B ? 'B' : 'A'}'s token and session ${sid}`);
    }
    const del = await fetch(url, { method: 'DELETE', headers: { Authorization: `Bearer ${TOK_B}`, 'Mcp-Session-Id': mcpSid } });
    assert.equal(del.status, 404, 'B deleted A\'s MCP session');
  }, { configExtra: TENANTS }));

  test('a deeply nested JSON body is an error, not a crash', T, () => withHttp(async ({ url }) => {
    const a = await connectHttp(url);
    try {
      const sid = await create(a);
      const deep = '['.repeat(100_000) + ']'.repeat(100_000);
      const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"code_sandbox_info","arguments":{"x":${deep}}}}` });
      assert.ok(r.status >= 400 && r.status < 500, `nested body: ${r.status}`);
      await ok(a, 'code_sandbox_info', { session_id: sid });
    } finally {
      await a.close().catch(() => {});
    }
  }));
});

// ---------------------------------------------------------------- resources a session can take

describe('resources: what one session can make the server hold', () => {
  test('a session holds at most 8 interpreter contexts', T, () => withStdio(async ({ client }) => {
    const sid = await create(client);
    for (let i = 0; i < 8; i++) {
      const sc = await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: `echo ctx${i}`, context_id: `c${i}` });
      assert.equal(sc.stdout.trim(), `ctx${i}`);
    }
    // each context is a live `sbxtrace run` and an interpreter: a ninth is refused
    const r = await call(client, 'code_execute', { session_id: sid, language: 'python', code: 'print(1)', context_id: 'one-too-many' });
    assert.ok(refused(r), `a ninth context was started: ${JSON.stringify(r.res?.structuredContent)}`);
    assert.match(textOf(r.res), /context/);
    // the existing ones still answer, and a reset makes room
    assert.equal((await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: 'echo again', context_id: 'c3' })).stdout.trim(), 'again');
    assert.equal((await ok(client, 'code_reset_context', { session_id: sid, context_id: 'c0' })).reset, 1);
    assert.equal((await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: 'echo room', context_id: 'new' })).stdout.trim(), 'room');
    // fresh executions are not contexts: still allowed
    assert.equal((await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: 'echo fresh', fresh: true })).stdout.trim(), 'fresh');
  }));

  test('destroy removes a workspace tree deeper than the server\'s open-file limit, with a 0000 directory in it', T, () => withStdio(async ({ client, dataDir }) => {
    const sid = await create(client);
    // 600 nested directories, with a file at the bottom; the server runs with 256 fds
    await sh(client, sid, 'cd /workspace && for i in $(seq 600); do mkdir d && cd d || exit 1; done; echo bottom > f; chmod 000 .', { fresh: true });
    assert.ok(walk(dataDir).some((p) => p.endsWith(`${sid}/workspace/d`)), 'the tree was made');
    await ok(client, 'code_destroy_sandbox', { session_id: sid });
    const left = walk(dataDir).filter((p) => p.includes(sid));
    assert.deepEqual(left.slice(0, 3), [], `destroy left ${left.length} paths of the session behind`);
  }, { prefix: 'ulimit -n 256;' }));
});

// ---------------------------------------------------------------- hostile arguments (regressions of what holds)

describe('arguments: what a model can pass', () => {
  test('env names and values cannot inject into the policy override', T, () => withStdio(async ({ client }) => {
    const sid = await create(client);
    const env = { A: 'x" , B = "y', C: 'z\n[limits]\nwall_time = "1s"', D: '${WORKSPACE}|$HOME', E: '\\u0041\\' };
    const sc = await sh(client, sid, 'for v in A B C D E; do printf "%s=[%s]\\n" $v "${!v}"; done; sleep 1.5', { env });
    assert.equal(sc.stdout, 'A=[x" , B = "y]\nB=[]\nC=[z\n[limits]\nwall_time = "1s"]\nD=[${WORKSPACE}|$HOME]\nE=[\\u0041\\]\n');
    for (const bad of [{ 'A = "1", B': 'x' }, { 'A.B': 'x' }, { '1A': 'x' }, { 'A]\n[limits': 'x' }]) {
      const r = await call(client, 'code_execute', { session_id: sid, language: 'shell', code: 'true', env: bad });
      assert.ok(refused(r), `env ${JSON.stringify(bad)} was accepted`);
    }
  }));

  test('context_id, session ids and NUL bytes name nothing outside the session', T, () => withStdio(async ({ client, dataDir }) => {
    const sid = await create(client);
    for (const ctx of ['../x', 'a/b', '/etc', 'x'.repeat(65)]) {
      const r = await call(client, 'code_execute', { session_id: sid, language: 'shell', code: 'true', context_id: ctx });
      assert.ok(refused(r), `context_id ${ctx} accepted`);
    }
    for (const other of ['../local/' + sid, sid + '/..', sid.slice(0, -1) + '/', 'sbx_' + 'A'.repeat(24), sid + '\u0000']) {
      // a NUL byte makes the whole message a JSON-RPC parse error (id null), which the
      // SDK cannot match to the call: it only times out
      const r = await call(client, 'code_read_file', { session_id: other, path: '/workspace' }, 10_000);
      assert.ok(refused(r), `session id ${JSON.stringify(other)} accepted`);
    }
    const r = await call(client, 'code_write_file', { session_id: sid, path: 'a\u0000/../../x', content: 'x' }, 10_000);
    assert.ok(refused(r) || !walk(dataDir).some((p) => p.endsWith('/x') && !p.includes('/workspace/')), 'a NUL byte in a path reached outside the workspace');
  }));

  test('the file tools do not reach the server\'s /proc through the node preset\'s /proc', T, () => withStdio(async ({ client }) => {
    const sid = await create(client, { policy: 'node' });
    await sh(client, sid, 'cd /workspace && ln -s /proc/self/environ env && ln -s /proc/self/fd/0 fd0 && ln -s /proc/self/cwd cwd && ln -s /proc/1 p1 && mkfifo fifo', { fresh: true });
    for (const p of ['/proc/self/environ', '/proc/self/status', '/proc/self/fd/0', '/proc/1/environ', '/workspace/env',
      '/workspace/fd0', '/workspace/cwd/x', '/workspace/p1/environ', '/workspace/fifo', '/dev/null']) {
      const r = await call(client, 'code_read_file', { session_id: sid, path: p });
      assert.ok(refused(r), `read ${p}: ${JSON.stringify(r.res?.structuredContent)}`);
    }
    for (const p of ['/proc', '/proc/self/fd', '/dev']) {
      assert.ok(refused(await call(client, 'code_list_files', { session_id: sid, path: p })), `list ${p}`);
    }
  }, { configExtra: '' }));
});

// ---------------------------------------------------------------- code in the session against the file tools

describe('races: code swapping names while the file tools run', () => {
  test('a name swapped between a file, a symlink out, a hard link and a FIFO is never followed or written through', T, () => withStdio(async ({ client, dataDir }) => {
    const sid = await create(client);
    const sdir = walk(dataDir).find((p) => p.endsWith(`/${sid}`));
    const stateBefore = (await import('node:fs')).readFileSync(join(sdir, 'state.json'), 'utf8');
    // a context's bash keeps its background job between calls
    await sh(client, sid, `cd /workspace && echo victim > victim && echo real > s
( while :; do
    ln -sfn ../state.json s.l && mv -fT s.l s
    ln -f victim s.h && mv -fT s.h s
    echo real > s.r && mv -fT s.r s
    rm -f s.f; mkfifo s.f && mv -fT s.f s
    ln -sfn /run/sbxtrace s.d && mv -fT s.d s
  done ) >/dev/null 2>&1 &
echo started`);
    let reads = 0;
    for (let i = 0; i < 40; i++) {
      const r = await call(client, 'code_read_file', { session_id: sid, path: '/workspace/s' });
      if (!refused(r)) {
        reads++;
        assert.ok(/^((real|victim|[WA]\d+)\n)*$/.test(r.res.structuredContent.content), `read through a swap: ${JSON.stringify(r.res.structuredContent.content)}`);
      }
      await call(client, 'code_write_file', { session_id: sid, path: '/workspace/s', content: `W${i}\n` });
      await call(client, 'code_write_file', { session_id: sid, path: '/workspace/s', content: `A${i}\n`, append: true });
      await call(client, 'code_list_files', { session_id: sid, path: '/workspace/s' });
    }
    await ok(client, 'code_reset_context', { session_id: sid });
    // the hard link's target was never written through, the session's own files never touched
    const victim = await ok(client, 'code_read_file', { session_id: sid, path: '/workspace/victim' });
    assert.equal(victim.content, 'victim\n', 'a write or append went through the hard link');
    const { readFileSync, readdirSync: rd } = await import('node:fs');
    const stateAfter = JSON.parse(readFileSync(join(sdir, 'state.json'), 'utf8'));
    assert.equal(stateAfter.id, JSON.parse(stateBefore).id, 'state.json was overwritten');
    assert.deepEqual(rd(join(sdir, 'run')).filter((n) => !/^(driver\.(sh|py|js)|\d+-[0-9a-f]+\.(sh|py|js))$/.test(n)), [], 'something was written into run/');
    assert.ok(reads >= 0);
  }));
});
