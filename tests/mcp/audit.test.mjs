// code_audit (issue 17): paging through a session's audit.jsonl, the kinds filter, and the
// sandbox's syscall records when the operator sets [server] audit_syscalls = true.
// Run with  SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/audit.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, realpathSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.SBXTRACE_BIN || join(HERE, '../../build/cli/sbxtrace'));
const T = { timeout: 180_000 };
const CALL = { timeout: 120_000 };
const textOf = (res) => (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function withServer(server, fn) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN}`);
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-audit-test-')));
  const dataDir = join(root, 'data');
  const config = join(root, 'operator.toml');
  writeFileSync(config, `[server]\ndata_dir = "${dataDir}"\n${server}\n`);
  const transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--config', config], env: { ...process.env }, stderr: 'pipe' });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  const client = new Client({ name: 'sbxtrace-audit-tests', version: '0.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport, CALL);
    await client.listTools(undefined, CALL); // output schemas are checked from here on
    return await fn({ client, dataDir });
  } catch (e) {
    e.message += `\nserver stderr:\n${stderr.join('')}`;
    throw e;
  } finally {
    await client.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

const call = async (client, name, args) => {
  const res = await client.callTool({ name, arguments: args }, undefined, CALL);
  assert.notEqual(res.isError, true, `${name}: ${textOf(res)}`);
  return res.structuredContent;
};

describe('code_audit', () => {
  test('pages through the session\'s events with since_seq and limit, filters by kind', T, () => withServer('', async ({ client }) => {
    const { session_id: sid } = await call(client, 'code_create_sandbox', {});
    for (const n of [1, 2, 3])
      await call(client, 'code_execute', { session_id: sid, language: 'shell', code: `echo run-${n}`, fresh: true });
    const all = await call(client, 'code_audit', { session_id: sid });
    assert.ok(all.events.length >= 4, JSON.stringify(all));
    assert.equal(all.has_more, false);
    assert.equal(all.events[0].kind, 'session_created');
    all.events.forEach((e, i) => {
      assert.equal(e.seq, i + 1);
      assert.match(e.prev_sha256, /^([0-9a-f]{64}|0)$/);
      assert.equal(e.session_id, sid);
    });
    assert.equal(all.next_seq, all.events.at(-1).seq);

    // two at a time, following next_seq, gives the same events in the same order
    const paged = [];
    let since = 0;
    for (let guard = 0; guard < 20; guard++) {
      const page = await call(client, 'code_audit', { session_id: sid, since_seq: since, limit: 2 });
      assert.ok(page.events.length <= 2);
      paged.push(...page.events);
      if (!page.has_more) break;
      assert.equal(page.next_seq, page.events.at(-1).seq);
      since = page.next_seq;
    }
    assert.deepEqual(paged.map((e) => e.seq), all.events.map((e) => e.seq));

    const calls = await call(client, 'code_audit', { session_id: sid, kinds: ['tool_call'] });
    assert.ok(calls.events.every((e) => e.kind === 'tool_call'));
    assert.equal(calls.events.filter((e) => e.tool === 'code_execute').length, 3);

    // reading the log does not write to it
    const again = await call(client, 'code_audit', { session_id: sid });
    assert.equal(again.events.length, all.events.length);
    // nothing after the end
    const none = await call(client, 'code_audit', { session_id: sid, since_seq: all.next_seq });
    assert.deepEqual(none.events, []);
    assert.equal(none.next_seq, all.next_seq);
  }));

  test('refuses an unknown session and a limit over 1000', T, () => withServer('', async ({ client }) => {
    const res = await client.callTool({ name: 'code_audit', arguments: { session_id: 'sbx_000000000000000000000000' } }, undefined, CALL);
    assert.equal(res.isError, true);
    const { session_id: sid } = await call(client, 'code_create_sandbox', {});
    const big = await client.callTool({ name: 'code_audit', arguments: { session_id: sid, limit: 1001 } }, undefined, CALL)
      .catch((e) => ({ isError: true, content: [{ type: 'text', text: String(e) }] }));
    assert.equal(big.isError, true, textOf(big));
  }));

  test('with audit_syscalls, the sandbox\'s syscall records are in the log (executions, contexts, commands)', T, () => withServer('audit_syscalls = true', async ({ client, dataDir }) => {
    const { session_id: sid } = await call(client, 'code_create_sandbox', {});
    const r = await call(client, 'code_execute', { session_id: sid, language: 'shell', code: 'cat /workspace/nothing-here 2>/dev/null; echo done', fresh: true });
    assert.match(r.stdout, /done/);
    const sys = await call(client, 'code_audit', { session_id: sid, kinds: ['syscall'], limit: 1000 });
    assert.ok(sys.events.length > 0, 'no syscall records');
    assert.ok(sys.events.every((e) => e.kind === 'syscall' && e.record?.type === 'syscall' && e.execution_id === r.execution_id));
    assert.ok(sys.events.some((e) => /nothing-here/.test(JSON.stringify(e.record))), 'the open of /workspace/nothing-here is not recorded');
    const run = await call(client, 'code_audit', { session_id: sid, kinds: ['sandbox_run'] });
    assert.ok(run.events.length >= 1);

    // a stateful context: its records arrive after each call
    await call(client, 'code_execute', { session_id: sid, language: 'shell', code: 'cat /workspace/ctx-marker 2>/dev/null; echo ok' });
    const ctx = await call(client, 'code_audit', { session_id: sid, kinds: ['syscall'], since_seq: sys.next_seq, limit: 1000 });
    assert.ok(ctx.events.some((e) => /ctx-marker/.test(JSON.stringify(e.record))), 'the context\'s open is not recorded');
    assert.ok(ctx.events.every((e) => e.execution_id.startsWith('context-shell-default-')));

    // the per-run logs are merged and removed (contexts keep theirs while they live)
    const runs = join(dataDir, 'local', sid, 'audit-runs');
    assert.ok(readdirSync(runs).every((f) => f.startsWith('context-')), readdirSync(runs).join(' '));
  }));

  test('without audit_syscalls there are no syscall records', T, () => withServer('', async ({ client }) => {
    const { session_id: sid } = await call(client, 'code_create_sandbox', {});
    await call(client, 'code_execute', { session_id: sid, language: 'shell', code: 'echo hi', fresh: true });
    const sys = await call(client, 'code_audit', { session_id: sid, kinds: ['syscall'] });
    assert.deepEqual(sys.events, []);
  }));
});
