// The operator's own policy files in server.policies (docs/agents.md, "Operator config"):
// agents name one by its [sandbox] name, the session extends the file and gets /workspace.
// A file that is missing or does not load stops the server at start, naming the config and
// the policy file.
// Run with  SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/policy-files.test.mjs

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, realpathSync, existsSync, readFileSync } from 'node:fs';
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
