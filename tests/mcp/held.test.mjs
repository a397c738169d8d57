// Held connects through MCP (issue 17): a session whose operator config says
// [network] unlisted = "ask"; its executions' connects outside the allowlist are held on
// their seccomp notification and asked through the call's elicitation, else the server's
// approval socket (sbxtrace approve), else denied with approval_required in the result.
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

async function withServer({ elicitation = false, socket = true, timeout = 20 }, fn) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN}`);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-held-test-')));
  const sockDir = realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-held-sock-')));
  const sock = socket ? join(sockDir, 'approval.sock') : null;
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
  const transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--config', config, '--approval-socket', sock ?? 'none'], env: { ...process.env }, stderr: 'pipe' });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  const client = new Client({ name: 'sbxtrace-held-tests', version: '0.0.0' }, { capabilities: elicitation ? { elicitation: {} } : {} });
  const lst = await listener();
  try {
    await client.connect(transport, CALL);
    await client.listTools(undefined, CALL);
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
    assert.equal(lst.accepted(), 1);
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
