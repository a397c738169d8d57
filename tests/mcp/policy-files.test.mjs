// The operator's own policy files in server.policies (docs/agents.md, "Operator config"):
// agents name one by its [sandbox] name, the session extends the file and gets /workspace,
// and the file's held execs (exec.unlisted = "ask") and held opens ([[rule]] access =
// "ask-write") are routed as held connects are (agent/held.c): the approval socket
// (`sbxtrace approve`) or the call's elicitation. A file that is missing or does not load
// stops the server at start, naming the config and the policy file.
// Run with  SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/policy-files.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, realpathSync, existsSync, readFileSync } from 'node:fs';
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

// Programs a session of "review" may run without asking; /usr/bin/env is not among them.
// It extends permissive, which mounts the workspace read-only at /data and has no
// /workspace: the server adds that mount, as for a preset.
const REVIEW = `extends = "permissive"

[sandbox]
name = "review"

[exec]
allow = ["/usr/bin/python3*", "/bin/sh", "/usr/bin/sh", "/usr/bin/dash", "/bin/bash", "/usr/bin/bash"]
unlisted = "ask"
ask_timeout = "30s"
`;

// Writes to /workspace/*.cfg are held, and every open of /workspace/*.secret; everything
// else of the python preset stands.
const GUARDED = `extends = "python"

[sandbox]
name = "guarded"

[[rule]]
path = "/workspace/*.cfg"
access = "ask-write"
ask_timeout = "30s"

[[rule]]
path = "/workspace/*.secret"
access = "ask"
`;

function writeTree(files) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-polfile-test-')));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return root;
}

async function withServer({ policyFile, policyText, elicitation = false, socket = true }, fn) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN}`);
  const root = writeTree({ [policyFile]: policyText });
  const dataDir = join(root, 'data');
  const config = join(root, 'operator.toml');
  const sock = socket ? join(root, 'approval.sock') : null;
  writeFileSync(config, `[server]
data_dir = "${dataDir}"
policies = ["standard", "${join(root, policyFile)}"]
`);
  const transport = new StdioClientTransport({ command: BIN, args: ['mcp', '--config', config, '--approval-socket', sock ?? 'none'], env: { ...process.env }, stderr: 'pipe' });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  const client = new Client({ name: 'sbxtrace-policy-file-tests', version: '0.0.0' }, { capabilities: elicitation ? { elicitation: {} } : {} });
  try {
    await client.connect(transport, CALL);
    return await fn({ client, sock, dataDir, policyPath: join(root, policyFile) });
  } catch (e) {
    e.message += `\nserver stderr:\n${stderr.join('')}`;
    throw e;
  } finally {
    await client.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

async function pendingApprovals(sock, n = 1) {
  let list = [];
  for (let i = 0; i < 300 && list.length < n; i++) {
    const r = spawnSync(BIN, ['approvals', '--socket', sock, '--json'], { encoding: 'utf8' });
    list = r.status === 0 ? JSON.parse(r.stdout) : [];
    if (list.length < n) await sleep(100);
  }
  return list;
}

function approvalEvents(dataDir, sid) {
  return readFileSync(join(dataDir, 'local', sid, 'audit.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    .filter((e) => e.kind.startsWith('approval_'));
}

const create = (client, policy) => client.callTool({ name: 'code_create_sandbox', arguments: { policy } }, undefined, CALL);

describe('an operator\'s policy file with exec.unlisted = "ask"', () => {
  test('agents name it by its [sandbox] name, not its path; the session has /workspace', T, () => withServer({ policyFile: 'review.toml', policyText: REVIEW }, async ({ client, dataDir, policyPath }) => {
    const byPath = await create(client, policyPath);
    assert.equal(byPath.isError, true, 'the path is the operator\'s, not a name agents use');
    assert.match(textOf(byPath), /not offered here; choose one of: standard, review/);
    const res = await create(client, 'review');
    assert.notEqual(res.isError, true, textOf(res));
    assert.equal(res.structuredContent.policy, 'review');
    const sid = res.structuredContent.session_id;
    const generated = readFileSync(join(dataDir, 'local', sid, 'policy.toml'), 'utf8');
    assert.ok(generated.includes(`extends = "${policyPath}"`), generated);
    assert.match(generated, /path = "\/workspace"/);
    const w = await client.callTool({ name: 'code_write_file', arguments: { session_id: sid, path: 'in.txt', content: 'from the file tool' } }, undefined, CALL);
    assert.notEqual(w.isError, true, textOf(w));
    const run = await client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: 'print(open("/workspace/in.txt").read()); open("/workspace/out.txt", "w").write("from the code")' } }, undefined, CALL);
    assert.equal(run.structuredContent.exit_code, 0, textOf(run));
    assert.match(run.structuredContent.stdout, /from the file tool/);
    const r = await client.callTool({ name: 'code_read_file', arguments: { session_id: sid, path: '/workspace/out.txt' } }, undefined, CALL);
    assert.equal(r.structuredContent.content, 'from the code', textOf(r));
  }));

  test('code_run_command of an unlisted program is held: sbxtrace approve --allow runs it, --deny fails it', T, () => withServer({ policyFile: 'review.toml', policyText: REVIEW }, async ({ client, sock, dataDir }) => {
    const res = await create(client, 'review');
    assert.notEqual(res.isError, true, textOf(res));
    const sid = res.structuredContent.session_id;
    const env = () => client.callTool({ name: 'code_run_command', arguments: { session_id: sid, argv: ['/usr/bin/env'] } }, undefined, CALL);

    let pending = env();
    let list = await pendingApprovals(sock);
    assert.equal(list.length, 1, 'the exec of /usr/bin/env was not held on the socket');
    assert.equal(list[0].tool, 'exec');
    assert.equal(list[0].session_id, sid);
    assert.match(list[0].rule, /exec\.unlisted = "ask"/);
    assert.match(list[0].arguments, /\/usr\/bin\/env/);
    let d = spawnSync(BIN, ['approve', list[0].id, '--allow', '--socket', sock], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    let out = await pending;
    assert.equal(out.structuredContent.exit_code, 0, textOf(out));
    assert.match(out.structuredContent.stdout, /^PYTHONPATH=\/workspace\/\.packages\/python$/m, textOf(out));

    pending = env();
    list = await pendingApprovals(sock);
    assert.equal(list.length, 1, 'an allow_once is not remembered: the next run asks again');
    d = spawnSync(BIN, ['approve', list[0].id, '--deny', '--socket', sock, '--note', 'not env'], { encoding: 'utf8' });
    assert.equal(d.status, 0, d.stderr);
    out = await pending;
    assert.equal(out.isError, true, textOf(out));
    assert.doesNotMatch(out.structuredContent.stdout, /PYTHONPATH=/);
    assert.equal(out.structuredContent.exit_code, 126, textOf(out)); // the command could not be executed
    assert.ok(out.structuredContent.notices.some((n) => /^denied: an exec of \/usr\/bin\/env was not approved/.test(n)), JSON.stringify(out.structuredContent.notices));
    const ev = approvalEvents(dataDir, sid);
    assert.deepEqual(ev.map((e) => [e.kind, e.tool, e.decision ?? e.channel]), [
      ['approval_request', 'exec', 'socket'], ['approval_decision', 'exec', 'allow_once'],
      ['approval_request', 'exec', 'socket'], ['approval_decision', 'exec', 'deny']]);
    assert.equal(ev[3].note, 'not env');

    // a listed program is not asked about
    const py = await client.callTool({ name: 'code_run_command', arguments: { session_id: sid, argv: ['/usr/bin/python3', '-c', 'print(6 * 7)'] } }, undefined, CALL);
    assert.equal(py.structuredContent.exit_code, 0, textOf(py));
    assert.match(py.structuredContent.stdout, /42/);
    assert.equal(approvalEvents(dataDir, sid).length, 4);
  }));
});

describe('a session made with a policy file, after a restart', () => {
  test('it keeps the file as its policy, even when the config no longer offers it', T, async () => {
    const root = writeTree({ 'review.toml': REVIEW });
    const dataDir = join(root, 'data');
    const config = join(root, 'operator.toml');
    const serve = async (policies, fn) => {
      writeFileSync(config, `[server]\ndata_dir = "${dataDir}"\npolicies = ${JSON.stringify(policies)}\n`);
      const client = new Client({ name: 'sbxtrace-policy-file-tests', version: '0.0.0' });
      await client.connect(new StdioClientTransport({ command: BIN, args: ['mcp', '--config', config, '--approval-socket', 'none'], stderr: 'pipe' }), CALL);
      try {
        return await fn(client);
      } finally {
        await client.close().catch(() => {});
      }
    };
    try {
      const sid = await serve(['standard', join(root, 'review.toml')], async (client) => {
        const res = await create(client, 'review');
        assert.notEqual(res.isError, true, textOf(res));
        return res.structuredContent.session_id;
      });
      const state = JSON.parse(readFileSync(join(dataDir, 'local', sid, 'state.json'), 'utf8'));
      assert.equal(state.policy, 'review');
      assert.equal(state.policy_file, join(root, 'review.toml'));
      await serve(['standard'], async (client) => {
        const info = await client.callTool({ name: 'code_sandbox_info', arguments: { session_id: sid } }, undefined, CALL);
        assert.equal(info.structuredContent.policy, 'review', textOf(info));
        // the file's exec.allow still holds: python3 runs, env is held and, with no channel
        // to ask, denied at once
        const py = await client.callTool({ name: 'code_run_command', arguments: { session_id: sid, argv: ['/usr/bin/python3', '-c', 'print(6 * 7)'] } }, undefined, CALL);
        assert.match(py.structuredContent.stdout, /42/, textOf(py));
        const env = await client.callTool({ name: 'code_run_command', arguments: { session_id: sid, argv: ['/usr/bin/env'] } }, undefined, CALL);
        assert.equal(env.structuredContent.exit_code, 126, textOf(env));
        assert.doesNotMatch(env.structuredContent.stdout, /PYTHONPATH=/);
        assert.ok(env.structuredContent.notices.some((n) => n.startsWith('approval_required: an exec of /usr/bin/env')), JSON.stringify(env.structuredContent.notices));
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('an operator\'s policy file with an ask-write rule', () => {
  const writeCfg = (n) => `
try:
    with open("/workspace/app.cfg", "w") as f:
        f.write("setting = ${n}\\n")
    print("written")
except OSError as e:
    print("refused", e.errno, e.strerror)
`;

  test('a write from code_execute is held: the elicitation allows it, then denies the next', T, () => withServer({ policyFile: 'guarded.toml', policyText: GUARDED, elicitation: true, socket: false }, async ({ client, dataDir }) => {
    const asked = [];
    let answer = 'allow_once';
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      // (a key set to undefined fails the SDK's check of the content against the form)
      return { action: 'accept', content: answer === 'deny' ? { decision: answer, note: 'leave the config alone' } : { decision: answer } };
    });
    const res = await create(client, 'guarded');
    assert.notEqual(res.isError, true, textOf(res));
    const sid = res.structuredContent.session_id;

    const ok = await client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: writeCfg(1) } }, undefined, CALL);
    assert.match(ok.structuredContent.stdout, /^written$/m, textOf(ok));
    assert.equal(asked.length, 1);
    assert.match(asked[0].message, /\/workspace\/app\.cfg/);
    assert.match(asked[0].message, /write/);
    let r = await client.callTool({ name: 'code_read_file', arguments: { session_id: sid, path: 'app.cfg' } }, undefined, CALL);
    assert.equal(r.structuredContent.content, 'setting = 1\n', textOf(r));

    answer = 'deny';
    const no = await client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: writeCfg(2) } }, undefined, CALL);
    assert.match(no.structuredContent.stdout, /^refused 13 Permission denied$/m, textOf(no));
    assert.equal(asked.length, 2);
    assert.equal(no.structuredContent.held_connects_denied, 1);
    assert.ok(no.structuredContent.notices.some((n) => /^denied: a write to \/workspace\/app\.cfg/.test(n)), JSON.stringify(no.structuredContent.notices));
    r = await client.callTool({ name: 'code_read_file', arguments: { session_id: sid, path: 'app.cfg' } }, undefined, CALL);
    assert.equal(r.structuredContent.content, 'setting = 1\n', 'the denied write changed the file');

    // a write elsewhere is not asked about
    const free = await client.callTool({ name: 'code_execute', arguments: { session_id: sid, language: 'python', code: 'open("/workspace/app.txt", "w").write("x"); print("plain")' } }, undefined, CALL);
    assert.match(free.structuredContent.stdout, /plain/, textOf(free));
    assert.equal(asked.length, 2);
    const ev = approvalEvents(dataDir, sid);
    assert.deepEqual(ev.filter((e) => e.kind === 'approval_decision').map((e) => [e.tool, e.decision, e.channel]),
      [['write', 'allow_once', 'elicitation'], ['write', 'deny', 'elicitation']]);
  }));

  test('the file tools do not ask: a path under "ask" is refused, one under "ask-write" is read-only', T, () => withServer({ policyFile: 'guarded.toml', policyText: GUARDED, elicitation: true, socket: false }, async ({ client, dataDir }) => {
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, async () => { asked++; return { action: 'accept', content: { decision: 'allow_once' } }; });
    const res = await create(client, 'guarded');
    assert.notEqual(res.isError, true, textOf(res));
    const sid = res.structuredContent.session_id;
    // put there by the operator, not through the sandbox
    writeFileSync(join(dataDir, 'local', sid, 'workspace', 'key.secret'), 'hunter2');
    writeFileSync(join(dataDir, 'local', sid, 'workspace', 'app.cfg'), 'setting = 0\n');
    const call = (name, args) => client.callTool({ name, arguments: { session_id: sid, ...args } }, undefined, CALL);
    for (const [name, args] of [['code_read_file', { path: 'key.secret' }], ['code_write_file', { path: 'key.secret', content: 'x' }], ['code_write_file', { path: 'new.secret', content: 'x' }]]) {
      const r = await call(name, args);
      assert.equal(r.isError, true, `${name} ${args.path}: ${textOf(r)}`);
      assert.match(textOf(r), /held for a decision .*the file tools do not ask/, textOf(r));
      assert.doesNotMatch(textOf(r), /hunter2/);
    }
    const w = await call('code_write_file', { path: 'app.cfg', content: 'setting = 9\n' });
    assert.equal(w.isError, true, textOf(w));
    assert.match(textOf(w), /read-only/, textOf(w));
    const r = await call('code_read_file', { path: 'app.cfg' });
    assert.equal(r.structuredContent.content, 'setting = 0\n', textOf(r));
    assert.equal(readFileSync(join(dataDir, 'local', sid, 'workspace', 'key.secret'), 'utf8'), 'hunter2');
    assert.equal(asked, 0);
  }));
});

describe('server.policies errors stop the server at start', () => {
  const start = (policies) => {
    const root = writeTree({
      'broken.toml': 'extends = "standard"\n\n[exec]\nunlisted = "ask"\n',
      'operator.toml': '',
    });
    const config = join(root, 'operator.toml');
    writeFileSync(config, `[server]\ndata_dir = "${join(root, 'data')}"\npolicies = ["standard", "${policies.replace('ROOT', root)}"]\n`);
    const r = spawnSync(BIN, ['mcp', '--config', config], { input: '', encoding: 'utf8', timeout: 30_000 });
    rmSync(root, { recursive: true, force: true });
    return { ...r, root, config };
  };

  test('a missing file: the message names the config, line, key and the file', T, () => {
    const r = start('ROOT/missing.toml');
    assert.notEqual(r.status, 0);
    assert.ok(r.stderr.includes(`${r.config}:3:`), r.stderr);
    assert.ok(r.stderr.includes(`server.policies: policy file '${r.root}/missing.toml' does not load`), r.stderr);
    assert.match(r.stderr, /No such file or directory/);
  });

  test('a file with a policy error: the config\'s place and the policy\'s own error', T, () => {
    const r = start('ROOT/broken.toml');
    assert.notEqual(r.status, 0);
    assert.ok(r.stderr.includes(`${r.config}:3:`), r.stderr);
    assert.ok(r.stderr.includes(`${r.root}/broken.toml:4:`), r.stderr);
    assert.match(r.stderr, /exec\.unlisted: unlisted = "ask" needs exec\.allow/);
  });

  test('a relative path is refused', T, () => {
    const r = start('review.toml');
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /server\.policies: 'review\.toml': a policy file must be named by its absolute path/);
  });
});
