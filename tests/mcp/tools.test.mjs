// Tests of `sbxtrace mcp` driven by the official MCP TypeScript SDK client,
// over stdio and Streamable HTTP (issue 16, "Tests").  Run with
//   SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/tools.test.mjs
// after tests/mcp/install.sh.  Each test starts its own server with its own
// temporary data dir; nothing is shared between tests.  No timing assertions:
// timeouts are only upper bounds so that a hung server fails instead of hanging.
//
// Where the issue's table names a result field only in words (create's
// "network mode", mark_private's "new network mode", info's fields) the tests
// accept `network_mode` or `network.mode` and otherwise look at the JSON text.

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  mkdtempSync, writeFileSync, readFileSync, readdirSync, lstatSync,
  existsSync, rmSync, realpathSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema, LoggingMessageNotificationSchema, CallToolResultSchema,
} from '@modelcontextprotocol/sdk/types.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.SBXTRACE_BIN || join(HERE, '../../build/cli/sbxtrace'));
// The conformance fixture server (same MCP code, fixture tools that send progress, log
// messages and requests to the client): beside the binary's build tree by default.
const FIXTURE_BIN = resolve(process.env.MCP_FIXTURE_SERVER || join(dirname(BIN), '../tests/mcp/fixture-server'));

const TEST_TIMEOUT = 300_000;        // per test (ms); an upper bound only
const CALL_TIMEOUT = 120_000;        // per MCP request (the SDK default is 60 s)
const START_TIMEOUT = 30_000;        // waiting for "listening on …"
const SESSION_ID = /^sbx_[0-9A-Za-z]{24}$/;
const TOOLS = [
  'code_create_sandbox', 'code_execute', 'code_write_file', 'code_read_file',
  'code_list_files', 'code_sandbox_info', 'code_mark_private', 'code_reset_context',
  'code_destroy_sandbox',
];
const T = { timeout: TEST_TIMEOUT };

// ---------------------------------------------------------------- helpers

const sha256 = (buf) => createHash('sha256').update(buf).digest('hex');
const uniq = () => randomBytes(6).toString('hex');

function tempRoot() {
  // realpath: /tmp may be a symlink, and host paths are compared below
  return realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-mcp-test-')));
}

// An operator config permissive enough for every test; `extra` is appended.
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
modes = ["none", "loopback", "allowlist", "full"]
allowed_domains = ["example.org"]
trusted = ["example.org"]
${extra}`);
  return file;
}

function serverArgs({ dataDir, config }) {
  const args = ['mcp', '--data-dir', dataDir];
  if (config) args.push('--config', config);
  return args;
}

function checkBinary() {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN} (set SBXTRACE_BIN)`);
}

async function connectClient(transport) {
  const client = new Client({ name: 'sbxtrace-mcp-tests', version: '0.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: CALL_TIMEOUT });
  // Listing the tools makes the SDK compile every outputSchema and validate
  // each later structuredContent against it.
  await client.listTools(undefined, { timeout: CALL_TIMEOUT });
  return client;
}

// stdio: the SDK spawns the server; closing the client ends stdin, then signals.
async function startStdio(opts) {
  checkBinary();
  const transport = new StdioClientTransport({
    command: BIN,
    args: serverArgs(opts),
    env: { ...process.env },
    stderr: 'pipe',
  });
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

// HTTP: we spawn `sbxtrace mcp --http 127.0.0.1:0` and read the first stderr line.
async function startHttpServer(opts) {
  checkBinary();
  const proc = spawn(BIN, [...serverArgs(opts), '--http', opts.listen || '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const stderr = [];
  const url = await new Promise((ok, fail) => {
    let buf = '';
    const timer = setTimeout(() => fail(new Error(`no "listening on" line within ${START_TIMEOUT} ms; stderr:\n${buf}`)), START_TIMEOUT);
    proc.stderr.on('data', (d) => {
      stderr.push(String(d));
      buf += String(d);
      const line = buf.split('\n')[0];
      if (buf.includes('\n')) {
        clearTimeout(timer);
        const m = line.match(/^listening on (http:\/\/\S+\/mcp)\s*$/);
        if (m) ok(m[1]);
        else fail(new Error(`unexpected first stderr line: ${JSON.stringify(line)}`));
      }
    });
    proc.on('error', (e) => { clearTimeout(timer); fail(e); });
    proc.on('exit', (code, sig) => {
      clearTimeout(timer);
      fail(new Error(`server exited (${code ?? sig}) before listening; stderr:\n${buf}`));
    });
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

async function connectHttp(url, { token, headers = {} } = {}) {
  const h = { ...headers };
  if (token) h.Authorization = `Bearer ${token}`;
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: h } });
  return connectClient(transport);
}

async function startHttp(opts) {
  const srv = await startHttpServer(opts);
  let client;
  try {
    client = await connectHttp(srv.url, { token: opts.token });
  } catch (e) {
    await srv.stop();
    throw e;
  }
  return {
    client, url: srv.url, stderr: srv.stderr,
    close: async () => { await client.close().catch(() => {}); await srv.stop(); },
  };
}

const START = { stdio: startStdio, http: startHttp };

// Run fn with a fresh server of the given kind and a fresh data dir.
async function withServer(kind, fn, { configExtra = '' } = {}) {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const config = writeConfig(root, dataDir, configExtra);
  const srv = await START[kind]({ dataDir, config });
  try {
    return await fn({ ...srv, root, dataDir, config });
  } finally {
    await srv.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

// tools/call returning { res } or { error } (a JSON-RPC error or SDK rejection).
async function call(client, name, args = {}, options = {}) {
  try {
    const res = await client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT, ...options });
    return { res };
  } catch (error) {
    return { error };
  }
}

const textOf = (res) => (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const describeOutcome = (r) => (r.error ? `error: ${r.error.message}` : `result: ${JSON.stringify(r.res)}`);

// A successful call: not isError, structuredContent present; returns it.
async function ok(client, name, args, options) {
  const r = await call(client, name, args, options);
  assert.ok(!r.error, `${name} threw: ${r.error?.message}`);
  assert.notEqual(r.res.isError, true, `${name} isError: ${textOf(r.res)} ${JSON.stringify(r.res.structuredContent)}`);
  assert.equal(typeof r.res.structuredContent, 'object', `${name}: no structuredContent`);
  assert.ok(textOf(r.res).length > 0, `${name}: no text rendering`);
  return r.res.structuredContent;
}

// A tool-level failure: isError true (the result still carries the text).
async function failed(client, name, args, options) {
  const r = await call(client, name, args, options);
  assert.ok(!r.error, `${name} should return isError, threw: ${r.error?.message}`);
  assert.equal(r.res.isError, true, `${name} should have failed: ${JSON.stringify(r.res)}`);
  return r.res;
}

// Refused either way (isError result or JSON-RPC error); returns the message.
function refused(r) {
  return Boolean(r.error) || r.res?.isError === true;
}

const networkMode = (sc) => sc?.network_mode ?? sc?.network?.mode ?? sc?.mode;

async function create(client, args = {}) {
  const sc = await ok(client, 'code_create_sandbox', args);
  assert.match(sc.session_id, SESSION_ID);
  return sc.session_id;
}

async function exec(client, session_id, language, code, extra = {}) {
  return call(client, 'code_execute', { ...(session_id ? { session_id } : {}), language, code, ...extra });
}

async function sh(client, session_id, code) {
  const sc = await ok(client, 'code_execute', { session_id, language: 'shell', code });
  assert.equal(sc.exit_code, 0, `shell failed: ${sc.stderr}`);
  return sc;
}

// All files under dir (no following of symlinks).
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

// The host directory holding a session's files (DATA_DIR/TENANT/SESSION/).
function sessionHostDir(dataDir, sid) {
  const hit = walk(dataDir).find((p) => p.endsWith(`/${sid}`) && lstatSync(p).isDirectory());
  assert.ok(hit, `no directory for ${sid} under ${dataDir}`);
  return hit;
}

// Plant canary files on the host around a session's directory; returns them.
function plantCanaries(root, dataDir, sid) {
  const sdir = sessionHostDir(dataDir, sid);
  const dirs = [root, dataDir, dirname(sdir), sdir];
  return dirs.map((d, i) => {
    const path = join(d, `canary-${i}-${uniq()}.txt`);
    const content = `CANARY-${uniq()}-${i}\n`;
    writeFileSync(path, content);
    return { path, name: path.split('/').pop(), content };
  });
}

function assertCanariesIntact(canaries) {
  for (const c of canaries) {
    assert.equal(readFileSync(c.path, 'utf8'), c.content, `host file ${c.path} was modified`);
  }
}

// What the sandbox's own code sees at path (cwd /workspace, like the tools).
async function inView(client, sid, code) {
  const r = await exec(client, sid, 'shell', `cd /workspace && ${code}`);
  assert.ok(!r.error, r.error?.message);
  return r.res.structuredContent;
}

const q = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

// The file tools must refuse a path or see exactly the sandbox's own view of
// it: a read returns what `cat` inside the sandbox returns, and on top of that
// a host file the view does not show (the canaries) never appears.
async function assertReadConfined(client, sid, path, canaries) {
  const r = await call(client, 'code_read_file', { session_id: sid, path });
  if (refused(r)) return;
  const view = await inView(client, sid, `cat -- ${q(path)}`);
  assert.equal(view.exit_code, 0, `read_file ${path} succeeded where the sandbox cannot read: ${describeOutcome(r)}`);
  assert.equal(r.res.structuredContent.content, view.stdout, `read_file ${path} differs from the sandbox's view`);
  const leaked = canaries.filter((c) => r.res.structuredContent.content.includes(c.content.trim()));
  for (const c of leaked) {
    // only acceptable if the sandbox sees that host file at its own host path
    const own = await inView(client, sid, `cat -- ${q(c.path)}`);
    assert.equal(own.stdout, c.content, `read_file ${path} reached host file ${c.path}`);
  }
}

// A listing is refused, or names only what `ls -A` inside the sandbox names.
async function assertListConfined(client, sid, path, canaries) {
  const r = await call(client, 'code_list_files', { session_id: sid, path });
  if (refused(r)) return;
  const view = await inView(client, sid, `ls -A1 -- ${q(path.endsWith('/') ? path : path + '/')}`);
  assert.equal(view.exit_code, 0, `list_files ${path} succeeded where the sandbox cannot list: ${describeOutcome(r)}`);
  const names = new Set(view.stdout.split('\n').filter(Boolean));
  for (const e of r.res.structuredContent.entries) {
    const base = e.path.replace(/\/+$/, '').split('/').pop();
    assert.ok(names.has(base), `list_files ${path} shows ${e.path}, which the sandbox does not see`);
  }
  for (const c of canaries) {
    if (r.res.structuredContent.entries.some((e) => e.path.endsWith(c.name))) {
      const own = await inView(client, sid, `ls -A1 -- ${q(dirname(c.path) + '/')}`);
      assert.ok(own.stdout.split('\n').includes(c.name), `list_files ${path} reached host dir of ${c.path}`);
    }
  }
}

// ---------------------------------------------------------------- per transport

for (const kind of ['stdio', 'http']) {
  describe(`${kind}: tools, happy path`, () => {
    test('tools/list has every tool with input and output schemas', T, () => withServer(kind, async ({ client }) => {
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      for (const name of TOOLS) {
        const tool = tools.find((t) => t.name === name);
        assert.ok(tool, `missing tool ${name}; have ${names.join(', ')}`);
        assert.ok(tool.description, `${name}: no description`);
        assert.equal(tool.inputSchema?.type, 'object', `${name}: inputSchema`);
        assert.equal(tool.outputSchema?.type, 'object', `${name}: outputSchema`);
      }
    }));

    test('create_sandbox returns a session handle and /workspace, network off', T, () => withServer(kind, async ({ client }) => {
      const sc = await ok(client, 'code_create_sandbox', {});
      assert.match(sc.session_id, SESSION_ID);
      assert.equal(sc.workspace, '/workspace');
      assert.equal(networkMode(sc), 'none');
    }));

    for (const [language, code, want] of [
      ['python', 'print("hello from python")', 'hello from python\n'],
      ['shell', 'echo hello from shell', 'hello from shell\n'],
      ['javascript', 'console.log("hello from " + "javascript")', 'hello from javascript\n'],
    ]) {
      test(`execute ${language} in a session`, T, () => withServer(kind, async ({ client }) => {
        const sid = await create(client);
        const sc = await ok(client, 'code_execute', { session_id: sid, language, code });
        assert.equal(sc.stdout, want);
        assert.equal(sc.exit_code, 0);
        assert.equal(sc.timed_out, false);
        assert.equal(typeof sc.duration_ms, 'number');
        assert.equal(networkMode(sc), 'none');
        assert.ok(Array.isArray(sc.notices), 'notices is an array');
      }));

      test(`execute ${language} one-shot (no session_id)`, T, () => withServer(kind, async ({ client }) => {
        const sc = await ok(client, 'code_execute', { language, code });
        assert.equal(sc.stdout, want);
        assert.equal(sc.exit_code, 0);
      }));
    }

    test('execute passes stdin and env', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const sc = await ok(client, 'code_execute', {
        session_id: sid, language: 'shell', code: 'read l; echo "$l/$SBX_T"', stdin: 'line\n', env: { SBX_T: 'v' },
      });
      assert.equal(sc.stdout, 'line/v\n');
    }));

    test('state persists between executions of a session', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      await sh(client, sid, 'echo kept > /workspace/state.txt');
      const sc = await sh(client, sid, 'cat /workspace/state.txt');
      assert.equal(sc.stdout, 'kept\n');
    }));

    test('write, read, list round trip (utf8, base64, append, max_bytes)', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const text = 'héllo wörld\nline 2\n';
      let sc = await ok(client, 'code_write_file', { session_id: sid, path: '/workspace/a.txt', content: text });
      assert.equal(sc.bytes, Buffer.byteLength(text));
      assert.equal(sc.sha256, sha256(Buffer.from(text)));
      assert.match(sc.path, /a\.txt$/);

      sc = await ok(client, 'code_read_file', { session_id: sid, path: '/workspace/a.txt' });
      assert.equal(sc.content, text);
      assert.equal(sc.encoding, 'utf8');
      assert.equal(sc.size, Buffer.byteLength(text));
      assert.equal(sc.truncated, false);

      // the code sees what the tool wrote
      assert.equal((await sh(client, sid, 'cat /workspace/a.txt')).stdout, text);

      const bin = Buffer.from([0, 1, 2, 254, 255, 10, 13, 0x80, 0x7f]);
      sc = await ok(client, 'code_write_file', { session_id: sid, path: '/workspace/b.bin', content: bin.toString('base64'), encoding: 'base64' });
      assert.equal(sc.bytes, bin.length);
      assert.equal(sc.sha256, sha256(bin));
      sc = await ok(client, 'code_read_file', { session_id: sid, path: '/workspace/b.bin', encoding: 'base64' });
      assert.equal(sc.encoding, 'base64');
      assert.deepEqual(Buffer.from(sc.content, 'base64'), bin);
      assert.equal(sc.size, bin.length);

      await ok(client, 'code_write_file', { session_id: sid, path: '/workspace/a.txt', content: 'more\n', append: true });
      sc = await ok(client, 'code_read_file', { session_id: sid, path: '/workspace/a.txt' });
      assert.equal(sc.content, text + 'more\n');

      sc = await ok(client, 'code_read_file', { session_id: sid, path: '/workspace/a.txt', max_bytes: 3 });
      assert.equal(sc.truncated, true);
      assert.ok(Buffer.byteLength(sc.content) <= 3);

      await sh(client, sid, 'mkdir -p /workspace/sub/deeper && printf 12345 > /workspace/sub/deeper/c.txt');
      sc = await ok(client, 'code_list_files', { session_id: sid });
      const top = sc.entries.map((e) => e.path);
      assert.ok(top.some((p) => p.endsWith('a.txt')), `list: ${top}`);
      assert.ok(top.some((p) => p.endsWith('b.bin')), `list: ${top}`);
      assert.ok(!top.some((p) => p.endsWith('c.txt')), `non-recursive list went deep: ${top}`);
      const sub = sc.entries.find((e) => e.path.endsWith('sub'));
      assert.equal(sub?.type, 'directory');

      sc = await ok(client, 'code_list_files', { session_id: sid, path: '/workspace', recursive: true });
      const c = sc.entries.find((e) => e.path.endsWith('sub/deeper/c.txt'));
      assert.ok(c, `recursive list: ${sc.entries.map((e) => e.path)}`);
      assert.equal(c.type, 'file');
      assert.equal(c.size, 5);
      assert.ok(c.mtime !== undefined && c.mtime !== null, 'mtime');
    }));

    test('sandbox_info for one session and for all of the tenant', T, () => withServer(kind, async ({ client }) => {
      const a = await create(client);
      const b = await create(client);
      const one = await ok(client, 'code_sandbox_info', { session_id: a });
      assert.ok(JSON.stringify(one).includes(a));
      assert.equal(networkMode(one) ?? 'none', 'none');
      const all = await ok(client, 'code_sandbox_info', {});
      const s = JSON.stringify(all);
      assert.ok(s.includes(a) && s.includes(b), `info without session_id lists both: ${s}`);
    }));

    test('destroy, then every use says unknown session', T, () => withServer(kind, async ({ client, dataDir }) => {
      const sid = await create(client);
      await ok(client, 'code_write_file', { session_id: sid, path: '/workspace/x.txt', content: 'x' });
      const sc = await ok(client, 'code_destroy_sandbox', { session_id: sid });
      assert.equal(sc.destroyed, true);
      for (const [name, args] of [
        ['code_execute', { session_id: sid, language: 'shell', code: 'echo hi' }],
        ['code_read_file', { session_id: sid, path: '/workspace/x.txt' }],
        ['code_write_file', { session_id: sid, path: '/workspace/y.txt', content: 'y' }],
        ['code_list_files', { session_id: sid }],
        ['code_sandbox_info', { session_id: sid }],
        ['code_destroy_sandbox', { session_id: sid }],
      ]) {
        const res = await failed(client, name, args);
        assert.match(textOf(res), /unknown session/i, `${name}: ${textOf(res)}`);
      }
      assert.ok(!walk(dataDir).some((p) => p.includes(sid)), 'destroy left the session files behind');
    }));

    test('non-zero exit is isError with exit_code', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      let r = await exec(client, sid, 'shell', 'echo out; echo err >&2; exit 3');
      assert.ok(!r.error, r.error?.message);
      assert.equal(r.res.isError, true);
      assert.equal(r.res.structuredContent.exit_code, 3);
      assert.equal(r.res.structuredContent.stdout, 'out\n');
      assert.equal(r.res.structuredContent.stderr, 'err\n');
      r = await exec(client, sid, 'python', 'raise ValueError("boom")');
      assert.equal(r.res.isError, true);
      assert.notEqual(r.res.structuredContent.exit_code, 0);
      assert.match(r.res.structuredContent.stderr, /ValueError: boom/);
    }));

    test('timeout gives timed_out and isError; the session survives', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const r = await exec(client, sid, 'shell', 'sleep 30', { timeout: 1 });
      assert.ok(!r.error, r.error?.message);
      assert.equal(r.res.isError, true);
      assert.equal(r.res.structuredContent.timed_out, true);
      assert.equal((await sh(client, sid, 'echo alive')).stdout, 'alive\n');
    }));

    test('cancellation stops the call and its process tree; the session survives', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const marker = `30.${Math.floor(Math.random() * 9000) + 1000}`; // a unique `sleep` argument
      const ac = new AbortController();
      const cancellable = call(client, 'code_execute',
        { session_id: sid, language: 'shell', code: `sleep ${marker}; echo not-cancelled` }, { signal: ac.signal });
      await waitFor(() => sleepers(marker).length >= 1, 60_000, 'the sleep never started');
      ac.abort('test cancels');
      const r = await cancellable;
      assert.ok(r.error, `the aborted call should reject, got ${describeOutcome(r)}`);
      await waitFor(() => sleepers(marker).length === 0, 60_000, 'the cancelled sleep is still running');
      assert.equal((await sh(client, sid, 'echo alive')).stdout, 'alive\n');
    }));

    test('code_mark_private ratchets the network one way and tells the agent', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client, { network: { mode: 'full' } });
      let sc = await ok(client, 'code_sandbox_info', { session_id: sid });
      assert.equal(networkMode(sc), 'full');

      sc = await ok(client, 'code_mark_private', { session_id: sid, level: 'internal' });
      assert.equal(networkMode(sc), 'full', 'internal leaves the network unchanged');

      sc = await ok(client, 'code_mark_private', { session_id: sid, level: 'confidential', dataset: 'customers' });
      assert.equal(networkMode(sc), 'allowlist');
      let ex = await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: 'true' });
      assert.equal(networkMode(ex), 'allowlist');
      assert.ok(ex.notices.length > 0, 'the next execute carries a notice');

      sc = await ok(client, 'code_mark_private', { session_id: sid, level: 'secret' });
      assert.equal(networkMode(sc), 'none');
      ex = await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: 'true' });
      assert.equal(networkMode(ex), 'none');
      assert.ok(ex.notices.length > 0, 'the next execute carries a notice');

      // never widened again
      sc = await ok(client, 'code_mark_private', { session_id: sid, level: 'internal' });
      assert.equal(networkMode(sc), 'none');
      sc = await ok(client, 'code_sandbox_info', { session_id: sid });
      assert.equal(networkMode(sc), 'none');
    }));

    test('two sessions are isolated', T, () => withServer(kind, async ({ client, dataDir }) => {
      const a = await create(client);
      const b = await create(client);
      assert.notEqual(a, b);
      const secret = `secret-${uniq()}`;
      await ok(client, 'code_write_file', { session_id: a, path: '/workspace/only-a.txt', content: secret });
      const list = await ok(client, 'code_list_files', { session_id: b, recursive: true });
      assert.ok(!list.entries.some((e) => e.path.includes('only-a')), 'B lists A\'s file');
      const rb = await call(client, 'code_read_file', { session_id: b, path: '/workspace/only-a.txt' });
      assert.ok(refused(rb), `B reads A's file: ${describeOutcome(rb)}`);
      // B's code, given A's host path, must not reach it either
      const hostPath = walk(dataDir).find((p) => p.endsWith('/only-a.txt'));
      assert.ok(hostPath, 'A\'s file is on the host under the data dir');
      const r = await exec(client, b, 'shell', `cat '${hostPath}'; ls /workspace; cat /workspace/../*/only-a.txt`);
      assert.ok(!JSON.stringify(r.res ?? r.error.message).includes(secret), 'B\'s code read A\'s workspace');
    }));

    test('50 sessions at once: create, execute, destroy', { timeout: 900_000 }, () => withServer(kind, async ({ client }) => {
      const one = async (i) => {
        const sid = await create(client);
        const sc = await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: `echo n${i}` });
        assert.equal(sc.stdout, `n${i}\n`);
        assert.equal((await ok(client, 'code_destroy_sandbox', { session_id: sid })).destroyed, true);
        return sid;
      };
      const sids = await Promise.all(Array.from({ length: 50 }, (_, i) => one(i)));
      assert.equal(new Set(sids).size, 50, 'session ids are unique');
    }));
  });

  describe(`${kind}: error paths`, () => {
    test('bad session ids are refused', T, () => withServer(kind, async ({ client }) => {
      await create(client); // a live session exists; its neighbours must not be guessable
      for (const bad of ['sbx_AAAAAAAAAAAAAAAAAAAAAAAA', 'sbx_', 'nonsense', '../local', '', 'sbx_AAAAAAAAAAAAAAAAAAAAAAAA/../x']) {
        for (const [name, args] of [
          ['code_execute', { session_id: bad, language: 'shell', code: 'echo hi' }],
          ['code_read_file', { session_id: bad, path: '/workspace/x' }],
          ['code_destroy_sandbox', { session_id: bad }],
        ]) {
          const r = await call(client, name, args);
          assert.ok(refused(r), `${name} with session_id ${JSON.stringify(bad)}: ${describeOutcome(r)}`);
        }
      }
      const res = await failed(client, 'code_execute', { session_id: 'sbx_AAAAAAAAAAAAAAAAAAAAAAAA', language: 'shell', code: 'echo hi' });
      assert.match(textOf(res), /unknown session/i);
    }));

    test('unknown language and missing arguments are refused', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      assert.ok(refused(await exec(client, sid, 'cobol', 'DISPLAY "HI"')));
      assert.ok(refused(await call(client, 'code_execute', { session_id: sid, language: 'shell' })));
      assert.ok(refused(await call(client, 'code_write_file', { session_id: sid, content: 'x' })));
    }));

    test('`..` paths never leave the workspace', T, () => withServer(kind, async ({ client, root, dataDir }) => {
      const sid = await create(client);
      await ok(client, 'code_write_file', { session_id: sid, path: '/workspace/seed.txt', content: 'seed' });
      const canaries = plantCanaries(root, dataDir, sid);
      for (const c of canaries) {
        for (const up of ['../', '../../', '../../../', '../../../../../../']) {
          for (const path of [`/workspace/${up}${c.name}`, `${up}${c.name}`, `/workspace/sub/../${up}${c.name}`]) {
            await assertReadConfined(client, sid, path, canaries);
            await assertListConfined(client, sid, path.replace(/[^/]*$/, '') || '/', canaries);
          }
        }
      }
      // writes with .. land in the workspace or are refused, never beside it
      const name = `escape-${uniq()}.txt`;
      for (const path of [`/workspace/../${name}`, `../${name}`, `/workspace/../../${name}`, `../../../${name}`]) {
        await call(client, 'code_write_file', { session_id: sid, path, content: 'escaped' });
      }
      const sdir = sessionHostDir(dataDir, sid);
      for (const p of walk(root).filter((q) => q.endsWith(name))) {
        assert.ok(p.startsWith(sdir + '/'), `a write with .. created ${p} outside the session`);
      }
      assertCanariesIntact(canaries);
    }));

    test('absolute paths outside the view: /etc/passwd and host paths', T, () => withServer(kind, async ({ client, root, dataDir }) => {
      const sid = await create(client);
      const canaries = plantCanaries(root, dataDir, sid);
      // /etc/passwd: refused, or exactly what the sandbox's own code sees
      await assertReadConfined(client, sid, '/etc/passwd', canaries);
      // host paths of the data dir: refused, or what the code sees (never the canary)
      for (const c of canaries) await assertReadConfined(client, sid, c.path, canaries);
      for (const d of [root, dataDir, dirname(sessionHostDir(dataDir, sid)), '/', '/workspace/..']) {
        await assertListConfined(client, sid, d, canaries);
      }
      // writes outside the rw mounts are refused
      const target = `/etc/sbxtrace-mcp-test-${uniq()}`;
      const w = await call(client, 'code_write_file', { session_id: sid, path: target, content: 'x' });
      assert.ok(refused(w), `write to ${target}: ${describeOutcome(w)}`);
      assert.ok(!existsSync(target), `${target} was created on the host`);
      for (const c of canaries) {
        await call(client, 'code_write_file', { session_id: sid, path: c.path, content: 'overwritten' });
        await call(client, 'code_write_file', { session_id: sid, path: c.path, content: 'appended', append: true });
      }
      assertCanariesIntact(canaries);
    }));

    test('symlinks planted by the code do not lead the file tools out', T, () => withServer(kind, async ({ client, root, dataDir }) => {
      const sid = await create(client);
      const canaries = plantCanaries(root, dataDir, sid);
      const passwd = readFileSync('/etc/passwd');
      const links = {
        pw: '/etc/passwd',
        up: '../../',
        upup: '../../../../',
        root: '/',
        ...Object.fromEntries(canaries.map((c, i) => [`c${i}`, c.path])),
        ...Object.fromEntries(canaries.map((c, i) => [`d${i}`, dirname(c.path)])),
      };
      const script = Object.entries(links).map(([n, t]) => `ln -s '${t}' /workspace/${n}`).join('\n');
      await sh(client, sid, `${script}\nmkdir -p /workspace/nest && ln -s ../../ /workspace/nest/up2`);

      // reads: refused or the sandbox's own view
      await assertReadConfined(client, sid, '/workspace/pw', canaries);
      for (let i = 0; i < canaries.length; i++) {
        const c = canaries[i];
        await assertReadConfined(client, sid, `/workspace/c${i}`, canaries);
        await assertReadConfined(client, sid, `/workspace/d${i}/${c.name}`, canaries);
        for (const up of ['up', 'upup', 'nest/up2']) {
          await assertReadConfined(client, sid, `/workspace/${up}/${c.name}`, canaries);
        }
      }
      // listing through the links never shows host neighbours
      for (const n of ['up', 'upup', 'root', 'nest/up2', ...canaries.map((_, i) => `d${i}`)]) {
        await assertListConfined(client, sid, `/workspace/${n}`, canaries);
      }
      // a recursive listing reports the links, it does not walk through them
      const l = await call(client, 'code_list_files', { session_id: sid, path: '/workspace', recursive: true });
      assert.ok(!refused(l), describeOutcome(l));
      for (const e of l.res.structuredContent.entries) {
        assert.ok(/^(\/workspace\/)?(seed\.txt|pw|up|upup|root|[cd]\d|nest|nest\/up2)$/.test(e.path),
          `recursive list_files went through a link: ${e.path}`);
      }

      // writes through the links: refused, or the link itself replaced in the
      // workspace; never a write to the target
      for (const n of ['pw', ...canaries.map((_, i) => `c${i}`)]) {
        await call(client, 'code_write_file', { session_id: sid, path: `/workspace/${n}`, content: 'through-link' });
        await call(client, 'code_write_file', { session_id: sid, path: `/workspace/${n}`, content: 'appended', append: true });
      }
      for (let i = 0; i < canaries.length; i++) {
        await call(client, 'code_write_file', { session_id: sid, path: `/workspace/d${i}/${canaries[i].name}`, content: 'through-dir-link' });
        await call(client, 'code_write_file', { session_id: sid, path: `/workspace/up/${canaries[i].name}`, content: 'through-up-link' });
      }
      assertCanariesIntact(canaries);
      assert.deepEqual(readFileSync('/etc/passwd'), passwd, '/etc/passwd changed');
      for (const p of walk(root)) {
        if (p.startsWith(sessionHostDir(dataDir, sid) + '/')) continue;
        if (lstatSync(p).isFile() && !canaries.some((c) => c.path === p)) {
          const s = readFileSync(p, 'utf8');
          assert.ok(!/through-(link|dir-link|up-link)/.test(s), `a write through a symlink reached ${p}`);
        }
      }
    }));
  });
}

// ---------------------------------------------------------------- HTTP only

describe('http: tenants, origin, auth', () => {
  const tenants = `
[[tenant]]
name = "alpha"
token = "alpha-token-${'a'.repeat(32)}"

[[tenant]]
name = "beta"
token = "beta-token-${'b'.repeat(32)}"
`;
  const tokA = `alpha-token-${'a'.repeat(32)}`;
  const tokB = `beta-token-${'b'.repeat(32)}`;

  async function withTenantServer(fn) {
    const root = tempRoot();
    const dataDir = join(root, 'data');
    const config = writeConfig(root, dataDir, tenants);
    const srv = await startHttpServer({ dataDir, config });
    const clients = [];
    try {
      const connect = async (token) => { const c = await connectHttp(srv.url, { token }); clients.push(c); return c; };
      return await fn({ url: srv.url, connect, dataDir });
    } finally {
      for (const c of clients) await c.close().catch(() => {});
      await srv.stop();
      rmSync(root, { recursive: true, force: true });
    }
  }

  test('tenant B can neither see nor use tenant A\'s session', T, () => withTenantServer(async ({ connect, dataDir }) => {
    const a = await connect(tokA);
    const b = await connect(tokB);
    const sid = await create(a);
    await ok(a, 'code_write_file', { session_id: sid, path: '/workspace/a.txt', content: 'alpha data' });
    for (const [name, args] of [
      ['code_execute', { session_id: sid, language: 'shell', code: 'cat /workspace/a.txt' }],
      ['code_read_file', { session_id: sid, path: '/workspace/a.txt' }],
      ['code_write_file', { session_id: sid, path: '/workspace/b.txt', content: 'beta' }],
      ['code_list_files', { session_id: sid }],
      ['code_sandbox_info', { session_id: sid }],
      ['code_mark_private', { session_id: sid, level: 'secret' }],
      ['code_destroy_sandbox', { session_id: sid }],
    ]) {
      const r = await call(b, name, args);
      assert.ok(refused(r), `tenant B ${name} on A's session: ${describeOutcome(r)}`);
      assert.ok(!JSON.stringify(r.res ?? '').includes('alpha data'), `tenant B saw A's data via ${name}`);
    }
    const all = await ok(b, 'code_sandbox_info', {});
    assert.ok(!JSON.stringify(all).includes(sid), 'B\'s info lists A\'s session');
    // A's session is intact
    assert.equal((await ok(a, 'code_read_file', { session_id: sid, path: '/workspace/a.txt' })).content, 'alpha data');
    assert.ok(walk(dataDir).some((p) => p.includes('/alpha/')), 'sessions live under DATA_DIR/TENANT/');
  }));

  test('missing or wrong bearer token is rejected', T, () => withTenantServer(async ({ url }) => {
    await assert.rejects(connectHttp(url), 'no token');
    await assert.rejects(connectHttp(url, { token: 'wrong-token' }), 'wrong token');
    const res = await fetch(url, { method: 'POST', headers: jsonHeaders({ Authorization: 'Bearer wrong' }), body: initBody() });
    assert.equal(res.status, 401);
  }));

  test('a foreign Origin gets 403; a foreign Host is refused', T, async () => {
    const root = tempRoot();
    const dataDir = join(root, 'data');
    const srv = await startHttpServer({ dataDir, config: writeConfig(root, dataDir) });
    try {
      let res = await fetch(srv.url, { method: 'POST', headers: jsonHeaders({ Origin: 'http://evil.example.com' }), body: initBody() });
      assert.equal(res.status, 403);
      res = await fetch(srv.url, { method: 'POST', headers: jsonHeaders({ Origin: 'https://attacker.test:8443' }), body: initBody() });
      assert.equal(res.status, 403);
      // the legitimate origin (the server's own) is accepted
      res = await fetch(srv.url, { method: 'POST', headers: jsonHeaders({ Origin: new URL(srv.url).origin }), body: initBody() });
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('mcp-session-id'), 'Mcp-Session-Id at initialize');
      // GET has no SSE stream yet
      res = await fetch(srv.url, { method: 'GET', headers: { Accept: 'text/event-stream' } });
      assert.equal(res.status, 405);
      // Host header rebinding (undici lets us set Host only through a raw request)
      const { request } = await import('node:http');
      const status = await new Promise((ok, fail) => {
        const u = new URL(srv.url);
        const req = request({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST',
          headers: { ...jsonHeaders(), Host: 'evil.example.com' } }, (r) => { r.resume(); ok(r.statusCode); });
        req.on('error', fail);
        req.end(initBody());
      });
      assert.ok(status >= 400 && status < 500, `foreign Host got ${status}`);
    } finally {
      await srv.stop();
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a client that leaves the SSE stream of a tools/call cancels it; JSON for clients without SSE', T, () => withServer('http', async ({ client, url }) => {
    const sid = await create(client);
    const post = async (body, { sessionId, accept, signal } = {}) => fetch(url, {
      method: 'POST', signal, body: JSON.stringify(body),
      headers: {
        'content-type': 'application/json', accept,
        ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      },
    });
    const init = await post(JSON.parse(initBody()), { accept: 'application/json, text/event-stream' });
    const session = init.headers.get('mcp-session-id');
    await init.text();
    const exec = (id, code) => ({
      jsonrpc: '2.0', id, method: 'tools/call',
      params: { name: 'code_execute', arguments: { session_id: sid, language: 'shell', code } },
    });
    // a client that accepts only JSON gets JSON
    const plain = await post(exec(2, 'echo plain'), { sessionId: session, accept: 'application/json' });
    assert.match(plain.headers.get('content-type'), /^application\/json/);
    assert.equal((await plain.json()).result.structuredContent.stdout, 'plain\n');
    // one that accepts SSE gets a stream, and leaving it stops the call
    const marker = `30.${Math.floor(Math.random() * 9000) + 1000}`;
    const ac = new AbortController();
    const res = await post(exec(3, `sleep ${marker}; echo not-cancelled`), { sessionId: session, accept: 'application/json, text/event-stream', signal: ac.signal });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/event-stream/);
    await waitFor(() => sleepers(marker).length >= 1, 60_000, 'the sleep never started');
    ac.abort();
    await waitFor(() => sleepers(marker).length === 0, 20_000, 'the call went on after its client left the stream'); // < the sleep's 30 s
    assert.equal((await sh(client, sid, 'echo alive')).stdout, 'alive\n');
  }));

  test('a session created over HTTP is usable over stdio with the same data dir', T, async () => {
    const root = tempRoot();
    const dataDir = join(root, 'data');
    const config = writeConfig(root, dataDir);
    let sid;
    const http = await startHttp({ dataDir, config });
    try {
      sid = await create(http.client);
      await ok(http.client, 'code_write_file', { session_id: sid, path: '/workspace/h.txt', content: 'via http' });
    } finally {
      await http.close();
    }
    const stdio = await startStdio({ dataDir, config });
    try {
      assert.equal((await ok(stdio.client, 'code_read_file', { session_id: sid, path: '/workspace/h.txt' })).content, 'via http');
    } finally {
      await stdio.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

function jsonHeaders(extra = {}) {
  return { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...extra };
}

function initBody() {
  return JSON.stringify({
    jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
  });
}

// ---------------------------------------------------------------- restart

describe('stdio: restart', () => {
  test('a restarted server keeps a session\'s files', T, async () => {
    const root = tempRoot();
    const dataDir = join(root, 'data');
    const config = writeConfig(root, dataDir);
    try {
      let srv = await startStdio({ dataDir, config });
      let sid;
      try {
        sid = await create(srv.client);
        await ok(srv.client, 'code_write_file', { session_id: sid, path: '/workspace/keep.txt', content: 'survives' });
        await sh(srv.client, sid, 'mkdir -p /workspace/d && echo made-by-code > /workspace/d/e.txt');
      } finally {
        await srv.close();
      }
      srv = await startStdio({ dataDir, config });
      try {
        assert.equal((await ok(srv.client, 'code_read_file', { session_id: sid, path: '/workspace/keep.txt' })).content, 'survives');
        assert.equal((await ok(srv.client, 'code_read_file', { session_id: sid, path: '/workspace/d/e.txt' })).content, 'made-by-code\n');
        assert.equal((await sh(srv.client, sid, 'cat /workspace/keep.txt')).stdout, 'survives');
        const info = await ok(srv.client, 'code_sandbox_info', {});
        assert.ok(JSON.stringify(info).includes(sid), 'the session is listed after the restart');
      } finally {
        await srv.close();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('stdin EOF ends the server cleanly', T, async () => {
    const root = tempRoot();
    const dataDir = join(root, 'data');
    try {
      checkBinary();
      const proc = spawn(BIN, serverArgs({ dataDir, config: writeConfig(root, dataDir) }), { stdio: ['pipe', 'pipe', 'pipe'] });
      proc.stdout.resume();
      proc.stderr.resume();
      proc.stdin.end(initBody() + '\n');
      const code = await new Promise((r) => proc.on('exit', (c, s) => r(c ?? s)));
      assert.equal(code, 0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

// ---------------------------------------------------------------- server-to-client messages during a call

// Only the fixture server sends them for now (its tools test_tool_with_progress,
// test_tool_with_logging, test_elicitation); `sbxtrace mcp` shares the transport code.
describe('messages during a tools/call (fixture server)', () => {
  async function startFixtureHttp() {
    assert.ok(existsSync(FIXTURE_BIN), `fixture server not found at ${FIXTURE_BIN} (set MCP_FIXTURE_SERVER)`);
    const proc = spawn(FIXTURE_BIN, ['127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise((ok, fail) => {
      let buf = '';
      const timer = setTimeout(() => fail(new Error(`fixture server did not start: ${buf}`)), START_TIMEOUT);
      proc.stderr.on('data', (d) => {
        buf += String(d);
        const m = buf.match(/^listening on (http:\/\/\S+\/mcp)$/m);
        if (m) { clearTimeout(timer); ok(m[1]); }
      });
      proc.on('exit', (c, sig) => { clearTimeout(timer); fail(new Error(`fixture server exited (${c ?? sig}): ${buf}`)); });
    }).catch((e) => { proc.kill('SIGKILL'); throw e; });
    const stop = async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      await exited;
    };
    return { url, stop };
  }

  async function fixtureClient(transport, capabilities = {}) {
    const client = new Client({ name: 'sbxtrace-mcp-tests', version: '0.0.0' }, { capabilities });
    await client.connect(transport, { timeout: CALL_TIMEOUT });
    return client;
  }

  async function withFixture(kind, capabilities, fn) {
    if (kind === 'stdio') {
      assert.ok(existsSync(FIXTURE_BIN), `fixture server not found at ${FIXTURE_BIN} (set MCP_FIXTURE_SERVER)`);
      const client = await fixtureClient(new StdioClientTransport({ command: FIXTURE_BIN, args: ['--stdio'], stderr: 'pipe' }), capabilities);
      try { return await fn(client); } finally { await client.close().catch(() => {}); }
    }
    const srv = await startFixtureHttp();
    try {
      const client = await fixtureClient(new StreamableHTTPClientTransport(new URL(srv.url)), capabilities);
      try { return await fn(client); } finally { await client.close().catch(() => {}); }
    } finally {
      await srv.stop();
    }
  }

  test('http: a tools/call with a progressToken receives the progress notifications the server sends', T, () => withFixture('http', {}, async (client) => {
    const seen = [];
    const res = await client.request(
      { method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {}, _meta: { progressToken: 'tok-1' } } },
      CallToolResultSchema, { timeout: CALL_TIMEOUT, onprogress: (p) => seen.push(p) });
    assert.equal(textOf(res), 'Progress complete');
    assert.ok(seen.length >= 3, `expected 3 progress notifications, got ${JSON.stringify(seen)}`);
    assert.deepEqual(seen.map((p) => p.progress), [0, 50, 100]);
    assert.ok(seen.every((p) => p.total === 100));
    // and callTool (the SDK sets the token itself when onprogress is given)
    const again = [];
    await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { timeout: CALL_TIMEOUT, onprogress: (p) => again.push(p) });
    assert.equal(again.length, 3);
  }));

  for (const kind of ['http', 'stdio']) {
    test(`${kind}: log messages follow logging/setLevel`, T, () => withFixture(kind, {}, async (client) => {
      const logs = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
      await client.setLoggingLevel('warning');
      await client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, { timeout: CALL_TIMEOUT });
      assert.deepEqual(logs, [], 'info messages were sent at level warning');
      await client.setLoggingLevel('debug');
      await client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, { timeout: CALL_TIMEOUT });
      assert.deepEqual(logs.map((l) => [l.level, l.data]), [
        ['info', 'Tool execution started'], ['info', 'Tool processing data'], ['info', 'Tool execution completed']]);
    }));

    test(`${kind}: elicitation during a call: asked on the call's channel, answered by the client`, T, () => withFixture(kind, { elicitation: {} }, async (client) => {
      const asked = [];
      client.setRequestHandler(ElicitRequestSchema, async (req) => {
        asked.push(req.params);
        return { action: 'accept', content: { username: 'ada', email: 'ada@example.org' } };
      });
      const res = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } }, undefined, { timeout: CALL_TIMEOUT });
      assert.equal(asked.length, 1);
      assert.equal(asked[0].message, 'Who are you?');
      assert.deepEqual(asked[0].requestedSchema.required, ['username', 'email']);
      assert.notEqual(res.isError, true, textOf(res));
      assert.match(textOf(res), /action=accept/);
      assert.match(textOf(res), /ada@example\.org/);
      // two calls asking at once get each their own answer
      const both = await Promise.all(['one', 'two'].map((m) => client.callTool({ name: 'test_elicitation', arguments: { message: m } }, undefined, { timeout: CALL_TIMEOUT })));
      assert.ok(both.every((r) => /action=accept/.test(textOf(r))));
    }));

    test(`${kind}: no elicitation for a client that did not declare it`, T, () => withFixture(kind, {}, async (client) => {
      const res = await client.callTool({ name: 'test_elicitation', arguments: {} }, undefined, { timeout: CALL_TIMEOUT });
      assert.equal(res.isError, true);
      assert.match(textOf(res), /not supported/i);
    }));
  }
});

// ---------------------------------------------------------------- utilities

// Host processes running `sleep MARKER` (the sandbox's pids are visible from here).
function sleepers(marker) {
  const out = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv.some((a) => a.endsWith('sleep')) && argv.includes(marker)) out.push(Number(pid));
    } catch { /* gone */ }
  }
  return out;
}

async function waitFor(pred, ms, what) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return;
    await sleep(100);
  }
  assert.fail(what);
}

// ---------------------------------------------------------------- stateful contexts (issue 17)

const HAVE_MATPLOTLIB = (() => {
  try {
    const r = spawnSync('/usr/bin/python3', ['-c', 'import matplotlib'], { stdio: 'ignore' });
    return r.status === 0;
  } catch { return false; }
})();

for (const kind of ['stdio', 'http']) {
  describe(`${kind}: stateful contexts`, () => {
    test('python and javascript keep their state: x = 21, then x * 2 is 42', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client, { policy: 'python' });
      let sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'x = 21' });
      assert.deepEqual(sc.results, []);
      sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'x * 2' });
      assert.equal(sc.results[0]['text/plain'], '42');
      sc = await ok(client, 'code_execute', { session_id: sid, language: 'javascript', code: 'var x = 21' });
      sc = await ok(client, 'code_execute', { session_id: sid, language: 'javascript', code: 'x * 2' });
      assert.equal(sc.results[0]['text/plain'], '42');
      // fresh: a stateless one-off knows nothing of x
      const r = await failed(client, 'code_execute', { session_id: sid, language: 'python', code: 'print(x)', fresh: true });
      assert.match(r.structuredContent.stderr, /NameError/);
    }));

    test('a shell context keeps its cwd, variables and functions', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      await sh(client, sid, 'mkdir -p /workspace/d && cd /workspace/d && V=kept && f() { echo "f:$1"; }');
      const sc = await sh(client, sid, 'pwd; echo $V; f 1');
      assert.equal(sc.stdout, '/workspace/d\nkept\nf:1\n');
    }));

    test('an exception comes back as error {name, value, traceback} with isError', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const r = await failed(client, 'code_execute', { session_id: sid, language: 'python', code: 'def g():\n    return 1/0\ng()' });
      const e = r.structuredContent.error;
      assert.equal(e.name, 'ZeroDivisionError');
      assert.match(e.value, /division by zero/);
      assert.match(e.traceback, /<cell-\d+>/);
      assert.doesNotMatch(e.traceback, /driver\.py/);
      const j = await failed(client, 'code_execute', { session_id: sid, language: 'javascript', code: 'null.x' });
      assert.equal(j.structuredContent.error.name, 'TypeError');
      // the context survives its errors
      assert.equal((await ok(client, 'code_execute', { session_id: sid, language: 'python', code: '6 * 7' })).results[0]['text/plain'], '42');
    }));

    test('a timeout interrupts the code and keeps the state', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'kept = "yes"' });
      const r = await failed(client, 'code_execute', { session_id: sid, language: 'python', code: 'import time\ntime.sleep(60)', timeout: 2 });
      assert.equal(r.structuredContent.timed_out, true);
      assert.equal(r.structuredContent.error.name, 'KeyboardInterrupt');
      const sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'kept' });
      assert.equal(sc.results[0]['text/plain'], "'yes'");
      const s = await failed(client, 'code_execute', { session_id: sid, language: 'shell', code: 'cd /tmp; sleep 60', timeout: 1 });
      assert.equal(s.structuredContent.timed_out, true);
      assert.equal((await sh(client, sid, 'pwd')).stdout, '/tmp\n');
    }));

    test('a context killed by a budget is reported once and recreated, the workspace intact', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client, { limits: { memory_mb: 128 } });
      await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'open("/workspace/f.txt", "w").write("x"); state = 1' });
      const r = await failed(client, 'code_execute', {
        session_id: sid, language: 'python',
        code: 'import time\nchunks = []\nwhile True:\n    chunks.append(bytearray(16 << 20))\n    time.sleep(0.05)',
      });
      const sc = r.structuredContent;
      assert.ok(sc.killed_by === 'memory' || (sc.error && /MemoryError|ContextDied/.test(sc.error.name)), JSON.stringify(sc));
      const next = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'import os\nos.path.exists("/workspace/f.txt")' });
      assert.equal(next.results[0]['text/plain'], 'True');
    }));

    test('named contexts are separate; one context cannot reach another', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'import os; secret = "s3"; mypid = os.getpid()', context_id: 'a' });
      const pid = (await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'mypid', context_id: 'a' })).results[0]['text/plain'];
      const b = await failed(client, 'code_execute', { session_id: sid, language: 'python', code: 'secret', context_id: 'b' });
      assert.equal(b.structuredContent.error.name, 'NameError');
      // context b signals a's driver: refused (another sandboxed tree), a lives on
      const k = await ok(client, 'code_execute', {
        session_id: sid, language: 'python', context_id: 'b',
        code: `import os, signal\ntry:\n    os.kill(${pid}, signal.SIGKILL)\n    r = "sent"\nexcept OSError as e:\n    r = type(e).__name__\nr`,
      });
      assert.notEqual(k.results[0]['text/plain'], "'sent'");
      assert.equal((await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'secret', context_id: 'a' })).results[0]['text/plain'], "'s3'");
      // reset drops the state
      assert.equal((await ok(client, 'code_reset_context', { session_id: sid, context_id: 'a' })).reset, 1);
      const gone = await failed(client, 'code_execute', { session_id: sid, language: 'python', code: 'secret', context_id: 'a' });
      assert.equal(gone.structuredContent.error.name, 'NameError');
    }));

    test('a 20 s job streams its output as progress and outlives a 5 s client timeout', { timeout: 120_000 }, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const messages = [];
      const res = await client.callTool(
        { name: 'code_execute', arguments: {
          session_id: sid, language: 'python',
          code: 'import time\nfor i in range(10):\n    print(i)\n    time.sleep(1)\ntime.sleep(7)\nprint("done")',
        } },
        undefined,
        { timeout: 5_000, resetTimeoutOnProgress: true, maxTotalTimeout: 90_000, onprogress: (p) => messages.push(p) },
      );
      assert.notEqual(res.isError, true, textOf(res));
      const expected = [...Array(10).keys()].map((i) => `${i}\n`).join('') + 'done\n';
      assert.equal(res.structuredContent.stdout, expected);
      // progress values grow; the streamed stdout, in order, is the start of the output
      for (let i = 1; i < messages.length; i++) assert.ok(messages[i].progress > messages[i - 1].progress);
      const streamed = messages.map((m) => (m.message || '').split('\nstderr: ')[0])
        .filter((m) => m.startsWith('stdout: ')).map((m) => m.slice(8)).join('');
      assert.ok(streamed.length >= 6 && expected.startsWith(streamed), `streamed ${JSON.stringify(streamed)}`);
      assert.ok(messages.some((m) => !m.message), 'heartbeats during the silent 7 s');
    }));

    test('a matplotlib figure comes back as image/png', { ...T, skip: HAVE_MATPLOTLIB ? false : 'python3-matplotlib is not installed' }, () => withServer(kind, async ({ client }) => {
      const sid = await create(client, { policy: 'python' });
      const r = await call(client, 'code_execute', {
        session_id: sid, language: 'python',
        code: 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()',
      });
      assert.ok(!r.error, r.error?.message);
      assert.notEqual(r.res.isError, true, textOf(r.res));
      const img = r.res.content.find((c) => c.type === 'image');
      assert.ok(img && img.mimeType === 'image/png', 'an image content block');
      assert.equal(Buffer.from(img.data, 'base64').subarray(1, 4).toString(), 'PNG');
      assert.ok(r.res.structuredContent.results.some((x) => x['image/png']));
    }));
  });
}

// ---------------------------------------------------------------- commands and background processes (issue 17)

// The sleep itself, not the sbxtrace run whose argv also names it.
function sleepProcs(marker) {
  const out = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0].endsWith('sleep') && argv.includes(marker)) out.push(Number(pid));
    } catch { /* gone */ }
  }
  return out;
}

for (const kind of ['stdio', 'http']) {
  describe(`${kind}: commands and background processes`, () => {
    test('code_run_command runs argv without a shell, and a command line with cwd and stdin', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      let sc = await ok(client, 'code_run_command', { session_id: sid, argv: ['printf', '%s|', 'a b', '$HOME'] });
      assert.equal(sc.stdout, 'a b|$HOME|');
      sc = await ok(client, 'code_run_command', { session_id: sid, command: 'pwd; cat', cwd: '/tmp', stdin: 'from stdin\n' });
      assert.equal(sc.stdout, '/tmp\nfrom stdin\n');
      const r = await failed(client, 'code_run_command', { session_id: sid, command: 'exit 5' });
      assert.equal(r.structuredContent.exit_code, 5);
      await failed(client, 'code_run_command', { session_id: sid, argv: ['true'], command: 'true' });
    }));

    test('a background process: output while it runs, stdin, wait, and its end', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const started = await ok(client, 'code_run_command', {
        session_id: sid, background: true,
        command: 'echo first; read line; echo "got $line"; echo err >&2',
      });
      assert.match(started.process_id, /^p\d+$/);
      await waitFor(async () => (await ok(client, 'code_process', { session_id: sid, action: 'output', process_id: started.process_id })).stdout === 'first\n', 30_000, 'no first line');
      const list = await ok(client, 'code_process', { session_id: sid, action: 'list' });
      assert.equal(list.processes[0].running, true);
      await ok(client, 'code_process', { session_id: sid, action: 'write_stdin', process_id: started.process_id, data: 'hello\n' });
      const done = await ok(client, 'code_process', { session_id: sid, action: 'wait', process_id: started.process_id, timeout: 30 });
      assert.equal(done.running, false);
      assert.equal(done.exit_code, 0);
      assert.equal(done.stdout, 'first\ngot hello\n');
      assert.equal(done.stderr, 'err\n');
      const tail = await ok(client, 'code_process', { session_id: sid, action: 'output', process_id: started.process_id, since_stdout: 6 });
      assert.equal(tail.stdout, 'got hello\n');
    }));

    test('kill stops a background process; destroy stops the rest', T, () => withServer(kind, async ({ client }) => {
      const sid = await create(client);
      const m1 = `40.${Math.floor(Math.random() * 9000) + 1000}`;
      const m2 = `41.${Math.floor(Math.random() * 9000) + 1000}`;
      const a = await ok(client, 'code_run_command', { session_id: sid, background: true, argv: ['sleep', m1] });
      await ok(client, 'code_run_command', { session_id: sid, background: true, argv: ['sleep', m2] });
      await waitFor(() => sleepProcs(m1).length === 1 && sleepProcs(m2).length === 1, 60_000, 'the sleeps never started');
      await ok(client, 'code_process', { session_id: sid, action: 'kill', process_id: a.process_id });
      const w = await ok(client, 'code_process', { session_id: sid, action: 'wait', process_id: a.process_id, timeout: 30 });
      assert.equal(w.running, false);
      await waitFor(() => sleepProcs(m1).length === 0, 60_000, 'the killed sleep is still running');
      assert.equal(sleepProcs(m2).length, 1, 'the other process must not be touched');
      await ok(client, 'code_destroy_sandbox', { session_id: sid });
      await waitFor(() => sleepProcs(m2).length === 0, 60_000, 'destroy left a background process running');
    }));
  });
}
