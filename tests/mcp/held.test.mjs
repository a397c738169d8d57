// Held connects and sends through MCP (issue 17): a session whose operator config says
// [network] unlisted = "ask"; its executions' connects and sends outside the allowlist are held on
// their seccomp notification and asked through the call's elicitation, else the server's
// approval socket (sbxtrace approve), else denied with approval_required in the result.
// Stateful contexts (code_execute in a session) and background processes (code_run_command
// with background) are routed the same way: a context's held connect goes to the call in
// flight on it, a background process's to the approval socket (agent/held.c).
// Run with  SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/held.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, realpathSync, existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.SBXTRACE_BIN || join(HERE, '../../build/cli/sbxtrace'));
const T = { timeout: 180_000 };
const CALL = { timeout: 120_000 };
const textOf = (res) => (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function listener() {
  let accepted = 0;
  const srv = createServer((c) => { accepted++; c.end(); });
  await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
  return { port: srv.address().port, accepted: () => accepted, close: () => new Promise((ok) => srv.close(ok)) };
}

// socket: true (a path we pick), false (none), or 'advertised': the server's default path,
// in a runtime directory of this test, read back from the server's "approval socket PATH"
// line as an operator would.
async function withServer({ elicitation = false, socket = true, timeout = 20 }, fn) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN}`);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-held-test-')));
  const sockDir = realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-held-sock-')));
  let sock = socket === true ? join(sockDir, 'approval.sock') : null;
  const dataDir = join(root, 'data');
  const config = join(root, 'operator.toml');
  writeFileSync(config, `[server]
data_dir = "${dataDir}"

[network]
modes = ["none", "loopback", "allowlist"]
allowed_domains = ["192.0.2.1:80"]
unlisted = "ask"
ask_timeout = ${timeout}
`);
  const args = ['mcp', '--config', config];
  if (socket !== 'advertised') args.push('--approval-socket', sock ?? 'none');
  const transport = new StdioClientTransport({ command: BIN, args, env: { ...process.env, XDG_RUNTIME_DIR: sockDir }, stderr: 'pipe' });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  const client = new Client({ name: 'sbxtrace-held-tests', version: '0.0.0' }, { capabilities: elicitation ? { elicitation: {} } : {} });
  const lst = await listener();
  try {
    await client.connect(transport, CALL);
    await client.listTools(undefined, CALL);
    if (socket === 'advertised') {
      for (let i = 0; i < 100 && !sock; i++) {
        sock = /approval socket (\S+)/.exec(stderr.join(''))?.[1] ?? null;
        if (!sock) await sleep(50);
      }
      assert.ok(sock && sock.startsWith(join(sockDir, 'sbxtrace') + '/'), `no advertised approval socket: ${stderr.join('')}`);
    }
    const res = await client.callTool({ name: 'code_create_sandbox', arguments: { policy: 'python', network: { mode: 'allowlist', allowed_domains: ['192.0.2.1:80'] } } }, undefined, CALL);
    assert.notEqual(res.isError, true, textOf(res));
    return await fn({ client, sock, dataDir, lst, sid: res.structuredContent.session_id });
  } catch (e) {
    e.message += `\nserver stderr:\n${stderr.join('')}`;
    throw e;
  } finally {
    await client.close().catch(() => {});
    await lst.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(sockDir, { recursive: true, force: true });
  }
}

const connectCode = (port) => `
import socket
s = socket.socket()
try:
    s.connect(("127.0.0.1", ${port})); print("connected")
except OSError as e:
    print("refused", e.errno)
`;

const run = (client, sid, port) => client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: connectCode(port), fresh: true } }, undefined, CALL);

// The held connect's answer as the code sees it; and that the sandbox was given no socket
// (the run's --approval-fd is the supervisor's alone).
const connectReport = (port) => `
import os, socket, stat
def is_sock(fd):
    try:
        return stat.S_ISSOCK(os.fstat(fd).st_mode)
    except OSError:
        return False
print("sockets", [fd for fd in range(3, 256) if is_sock(fd)])
s = socket.socket()
try:
    s.connect(("127.0.0.1", ${port})); print("connected")
except OSError as e:
    print("refused", e.errno)
s.close()
`;

// The kernel completes a loopback connect before node's accept callback runs.
async function acceptedSoon(lst, n) {
  for (let i = 0; i < 100 && lst.accepted() < n; i++) await sleep(50);
  return lst.accepted();
}

const inContext = (client, sid, code) => client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code } }, undefined, CALL);

async function pendingApprovals(sock, n = 1) {
  let list = [];
  for (let i = 0; i < 300 && list.length < n; i++) {
    const r = spawnSync(BIN, ['approvals', '--socket', sock, '--json'], { encoding: 'utf8' });
    list = r.status === 0 ? JSON.parse(r.stdout) : [];
    if (list.length < n) await sleep(100);
  }
  return list;
}

function events(dataDir, sid) {
  return readFileSync(join(dataDir, 'local', sid, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    .filter((e) => e.kind.startsWith('approval_'));
}

describe('held connects through MCP', () => {
  test('the call\'s elicitation allows: the connect goes through', T, () => withServer({ elicitation: true, socket: false }, async ({ client, dataDir, lst, sid }) => {
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { decision: 'allow_once' } };
    });
    const res = await run(client, sid, lst.port);
    assert.match(res.structuredContent.stdout, /connected/, textOf(res));
    assert.equal(await acceptedSoon(lst, 1), 1);
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, new RegExp(`127\\.0\\.0\\.1:${lst.port}`));
    assert.match(asked[0].message, /connect/);
    const ev = events(dataDir, sid);
    assert.deepEqual(ev.map((e) => e.kind), ['approval_request', 'approval_decision']);
    assert.equal(ev[1].decision, 'allow_once');
    assert.equal(ev[1].channel, 'elicitation');
  }));

  test('sbxtrace approve --deny through the server\'s socket: refused, noted in the result', T, () => withServer({}, async ({ client, sock, dataDir, lst, sid }) => {
    const pending = run(client, sid, lst.port);
    let list = [];
    for (let i = 0; i < 300 && !list.length; i++) {
      const r = spawnSync(BIN, ['approvals', '--socket', sock, '--json'], { encoding: 'utf8' });
      list = r.status === 0 ? JSON.parse(r.stdout) : [];
      if (!list.length) await sleep(100);
    }
    assert.equal(list.length, 1);
    assert.equal(list[0].tool, 'connect');
    assert.match(list[0].arguments, new RegExp(`127\\.0\\.0\\.1:${lst.port}`));
    const d = spawnSync(BIN, ['approve', list[0].id, '--deny', '--socket', sock, '--note', 'not that one'], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    const res = await pending;
    assert.match(res.structuredContent.stdout, /refused 111/);
    assert.equal(lst.accepted(), 0);
    assert.ok(res.structuredContent.notices.some((n) => /denied: a connect to .*not that one|denied: a connect to/.test(n)), JSON.stringify(res.structuredContent.notices));
    const ev = events(dataDir, sid);
    assert.equal(ev.at(-1).decision, 'deny');
    assert.equal(ev.at(-1).channel, 'socket');
    assert.equal(ev.at(-1).note, 'not that one');
  }));

  test('a held send (UDP sendto outside the allowlist) is asked as sendto; denied through the socket', T, () => withServer({}, async ({ client, sock, dataDir, sid }) => {
    const udp = `
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    s.sendto(b"x", ("127.0.0.1", 9)); print("sent")
except OSError as e:
    print("refused", e.errno)
`;
    const pending = client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: udp, fresh: true } }, undefined, CALL);
    let list = [];
    for (let i = 0; i < 300 && !list.length; i++) {
      const r = spawnSync(BIN, ['approvals', '--socket', sock, '--json'], { encoding: 'utf8' });
      list = r.status === 0 ? JSON.parse(r.stdout) : [];
      if (!list.length) await sleep(100);
    }
    assert.equal(list.length, 1);
    assert.equal(list[0].tool, 'sendto');
    assert.match(list[0].rule, /a send outside/);
    const d = spawnSync(BIN, ['approve', list[0].id, '--deny', '--socket', sock], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    const res = await pending;
    assert.match(res.structuredContent.stdout, /refused 111/);
    assert.ok(res.structuredContent.notices.some((n) => /denied: a send to .*127\.0\.0\.1:9/.test(n)), JSON.stringify(res.structuredContent.notices));
    const ev = events(dataDir, sid);
    assert.equal(ev.at(-1).tool, 'sendto');
    assert.equal(ev.at(-1).decision, 'deny');
  }));

  test('no channel: denied at once, approval_required in the result', T, () => withServer({ socket: false }, async ({ client, dataDir, lst, sid }) => {
    const t0 = Date.now();
    const res = await run(client, sid, lst.port);
    assert.ok(Date.now() - t0 < 15_000);
    assert.match(res.structuredContent.stdout, /refused 111/);
    assert.equal(lst.accepted(), 0);
    assert.ok(res.structuredContent.notices.some((n) => n.startsWith('approval_required:')), JSON.stringify(res.structuredContent.notices));
    assert.equal(events(dataDir, sid).at(-1).decision, 'approval_required');
  }));
});

describe('held connects in stateful contexts', () => {
  test('the elicitation of the call in flight allows: the context\'s code connects, its state kept', T, () => withServer({ elicitation: true, socket: false }, async ({ client, dataDir, lst, sid }) => {
    const asked = [];
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { decision: 'allow_once' } };
    });
    const first = await inContext(client, sid, 'kept = 41');
    assert.equal(first.structuredContent.exit_code, 0, textOf(first));
    const res = await inContext(client, sid, connectReport(lst.port) + 'print("state", kept + 1)\n');
    assert.equal(res.structuredContent.context_id, 'default');
    assert.match(res.structuredContent.stdout, /^sockets \[\]$/m, textOf(res));
    assert.match(res.structuredContent.stdout, /^connected$/m, textOf(res));
    assert.match(res.structuredContent.stdout, /^state 42$/m, textOf(res));
    assert.equal(await acceptedSoon(lst, 1), 1);
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, new RegExp(`127\\.0\\.0\\.1:${lst.port}`));
    assert.equal(res.structuredContent.held_connects_denied, undefined);
    const ev = events(dataDir, sid);
    assert.deepEqual(ev.map((e) => e.kind), ['approval_request', 'approval_decision']);
    assert.equal(ev[1].decision, 'allow_once');
    assert.equal(ev[1].channel, 'elicitation');
  }));

  test('the elicitation denies: the code sees the connect refused, the result says so', T, () => withServer({ elicitation: true, socket: false }, async ({ client, dataDir, lst, sid }) => {
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { decision: 'deny', note: 'not from a context' } };
    });
    const res = await inContext(client, sid, connectReport(lst.port));
    assert.match(res.structuredContent.stdout, /^refused (111|13)$/m, textOf(res));
    assert.equal(lst.accepted(), 0);
    assert.equal(asked, 1);
    assert.equal(res.structuredContent.held_connects_denied, 1);
    assert.ok(res.structuredContent.notices.some((n) => /^denied: a connect to .*127\.0\.0\.1:/.test(n)), JSON.stringify(res.structuredContent.notices));
    const ev = events(dataDir, sid);
    assert.equal(ev.at(-1).decision, 'deny');
    assert.equal(ev.at(-1).channel, 'elicitation');
    assert.equal(ev.at(-1).note, 'not from a context');
    // the context lives on, and the next call asks again (a deny is not remembered)
    const again = await inContext(client, sid, connectReport(lst.port));
    assert.match(again.structuredContent.stdout, /^refused (111|13)$/m, textOf(again));
    assert.equal(asked, 2);
    assert.equal(again.structuredContent.execution_count, 2);
  }));

  test('the call is cancelled while its held connect waits on the socket: denied at once, the context lives on', T, () => withServer({ socket: 'advertised', timeout: 60 }, async ({ client, sock, dataDir, lst, sid }) => {
    const ac = new AbortController();
    const pending = client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: connectReport(lst.port) } }, undefined, { ...CALL, signal: ac.signal });
    const list = await pendingApprovals(sock);
    assert.equal(list.length, 1, 'the held connect was not on the socket');
    const t0 = Date.now();
    ac.abort();
    await assert.rejects(pending);
    let left = 1;
    for (let i = 0; i < 100 && left; i++) {
      left = (await pendingApprovals(sock, 0)).length;
      if (left) await sleep(100);
    }
    assert.equal(left, 0, 'the request stayed on the socket after the call was cancelled');
    assert.ok(Date.now() - t0 < 30_000);
    for (let i = 0; i < 100 && events(dataDir, sid).at(-1)?.kind !== 'approval_decision'; i++) await sleep(100);
    const ev = events(dataDir, sid);
    assert.equal(ev.at(-1).decision, 'deny');
    assert.equal(ev.at(-1).decider, 'cancelled');
    assert.equal(lst.accepted(), 0);
    const next = await inContext(client, sid, 'print("alive")');
    assert.match(next.structuredContent.stdout, /alive/, textOf(next));
  }));

  test('the call cannot answer for itself: no channel denies, whatever its arguments and _meta say', T, () => withServer({ socket: false }, async ({ client, dataDir, lst, sid }) => {
    const extra = await client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: connectReport(lst.port), decision: 'allow_once' } }, undefined, CALL);
    assert.equal(extra.isError, true, 'an argument the schema does not name must be refused');
    const res = await client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: connectReport(lst.port) }, _meta: { 'io.sbxtrace/approval': { decision: 'allow_once' }, decision: 'allow_once' } }, undefined, CALL);
    assert.match(res.structuredContent.stdout, /^refused (111|13)$/m, textOf(res));
    assert.equal(lst.accepted(), 0);
    assert.ok(res.structuredContent.notices.some((n) => n.startsWith('approval_required:')), JSON.stringify(res.structuredContent.notices));
    assert.equal(events(dataDir, sid).at(-1).decision, 'approval_required');
  }));

  test('no call in flight: a thread the code left running asks through the approval socket', T, () => withServer({ elicitation: true, socket: 'advertised' }, async ({ client, sock, dataDir, lst, sid }) => {
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => { asked++; return { action: 'accept', content: { decision: 'allow_once' } }; });
    const started = await inContext(client, sid, `
import os, threading, socket, time
box = []
def later():
    # waits for a file the test writes once this call has returned: no code_execute is in
    # flight on the context when the connect is held
    while not os.path.exists("/workspace/go"):
        time.sleep(0.05)
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", ${lst.port})); box.append("connected")
    except OSError as e:
        box.append("refused %d" % e.errno)
t = threading.Thread(target=later); t.start()
print("started")
`);
    assert.match(started.structuredContent.stdout, /started/, textOf(started));
    const w = await client.callTool({ name: 'code_write_file', arguments: { session_id: sid, path: '/workspace/go', content: '' } }, undefined, CALL);
    assert.notEqual(w.isError, true, textOf(w));
    const list = await pendingApprovals(sock);
    assert.equal(list.length, 1, 'the held connect was not on the socket');
    assert.equal(list[0].tool, 'connect');
    assert.equal(list[0].session_id, sid);
    const d = spawnSync(BIN, ['approve', list[0].id, '--allow', '--socket', sock], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    const res = await inContext(client, sid, 't.join(); print(box)');
    assert.match(res.structuredContent.stdout, /\['connected'\]/, textOf(res));
    assert.equal(await acceptedSoon(lst, 1), 1);
    assert.equal(asked, 0, 'no call was in flight: the elicitation must not be used');
    const ev = events(dataDir, sid);
    assert.equal(ev.at(-1).decision, 'allow_once');
    assert.equal(ev.at(-1).channel, 'socket');
  }));
});

describe('held connects in background processes', () => {
  const bg = (client, sid, port) => client.callTool({ name: 'code_run_command', arguments: { session_id: sid, background: true, argv: ['python3', '-c', connectReport(port)] } }, undefined, CALL);
  const waitDone = async (client, sid, id) => {
    for (let i = 0; i < 20; i++) {
      const r = await client.callTool({ name: 'code_process', arguments: { session_id: sid, action: 'wait', process_id: id, timeout: 10 } }, undefined, CALL);
      if (!r.structuredContent.running) return r.structuredContent;
    }
    assert.fail('the background process did not end');
  };

  test('sbxtrace approve --allow from another process, on the socket the server advertised', T, () => withServer({ elicitation: true, socket: 'advertised' }, async ({ client, sock, dataDir, lst, sid }) => {
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => { asked++; return { action: 'accept', content: { decision: 'allow_once' } }; });
    const started = await bg(client, sid, lst.port);
    assert.notEqual(started.isError, true, textOf(started));
    const list = await pendingApprovals(sock);
    assert.equal(list.length, 1, 'the held connect was not on the socket');
    assert.equal(list[0].tool, 'connect');
    assert.match(list[0].arguments, new RegExp(`127\\.0\\.0\\.1:${lst.port}`));
    const d = spawnSync(BIN, ['approve', list[0].id, '--allow', '--socket', sock, '--note', 'fine'], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    const done = await waitDone(client, sid, started.structuredContent.process_id);
    assert.match(done.stdout, /^sockets \[\]$/m, done.stdout + done.stderr);
    assert.match(done.stdout, /^connected$/m, done.stdout + done.stderr);
    assert.equal(await acceptedSoon(lst, 1), 1);
    assert.equal(asked, 0, 'a background process has no call in flight');
    const ev = events(dataDir, sid);
    assert.deepEqual(ev.map((e) => e.kind), ['approval_request', 'approval_decision']);
    assert.equal(ev[1].decision, 'allow_once');
    assert.equal(ev[1].channel, 'socket');
    assert.equal(ev[1].note, 'fine');
  }));

  test('nobody answers: the timeout denies, and code_process says so', T, () => withServer({ socket: 'advertised', timeout: 3 }, async ({ client, sock, dataDir, lst, sid }) => {
    const started = await bg(client, sid, lst.port);
    assert.notEqual(started.isError, true, textOf(started));
    assert.equal((await pendingApprovals(sock)).length, 1);
    const done = await waitDone(client, sid, started.structuredContent.process_id);
    assert.match(done.stdout, /^refused (111|13)$/m, done.stdout + done.stderr);
    assert.equal(lst.accepted(), 0);
    assert.equal(done.held_connects_denied, 1);
    assert.ok(done.notices.some((n) => /^denied: a connect to .*127\.0\.0\.1:.*(timeout|no decision)/.test(n)), JSON.stringify(done.notices));
    assert.equal((await pendingApprovals(sock, 0)).length, 0);
    const ev = events(dataDir, sid);
    assert.equal(ev.at(-1).kind, 'approval_decision');
    assert.equal(ev.at(-1).decision, 'deny');
    assert.equal(ev.at(-1).timed_out, true);
  }));
});
