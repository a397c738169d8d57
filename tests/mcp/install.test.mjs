// code_install_package (docs/agents.md, "Package installs"), driven by the official MCP
// TypeScript SDK client over stdio, with no internet: the test builds a wheel and an npm
// tarball by hand, serves them from a PEP 503 simple index and a minimal npm registry on
// loopback, and points the server's operator config (or the host's pip and npm
// configuration) at them. Run with
//   SBXTRACE_BIN=build/cli/sbxtrace node --test tests/mcp/install.test.mjs
// after tests/mcp/install.sh (tests/mcp/run-tests.sh runs it with the others).

import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync, existsSync, rmSync, realpathSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const BIN = resolve(process.env.SBXTRACE_BIN || join(HERE, '../../build/cli/sbxtrace'));
const CALL_TIMEOUT = 180_000;
const T = { timeout: 400_000 };
// The sandbox runs the host's python3 with the host's pip (it sees /usr read-only): without
// pip the pip tests skip, saying so (CI installs python3-pip).
const PY = ['/usr/bin/python3', '/usr/local/bin/python3'].find((p) => existsSync(p));
const NO_PIP = PY && spawnSync(PY, ['-m', 'pip', '--version']).status === 0
  ? false : `no pip for ${PY || 'python3'} on this host (apt-get install python3-pip)`;
const TP = { ...T, skip: NO_PIP };

// ------------------------------------------------------------ packages built by hand

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// A zip archive of stored (uncompressed) entries: local headers, central directory, end.
function zip(files) {
  const locals = [], centrals = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const n = Buffer.from(name), data = Buffer.from(content), crc = crc32(data);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0); lh.writeUInt16LE(20, 4); lh.writeUInt16LE(0, 6);
    lh.writeUInt16LE(0, 8); lh.writeUInt16LE(0, 10); lh.writeUInt16LE(0x21, 12);
    lh.writeUInt32LE(crc, 14); lh.writeUInt32LE(data.length, 18); lh.writeUInt32LE(data.length, 22);
    lh.writeUInt16LE(n.length, 26); lh.writeUInt16LE(0, 28);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0); ch.writeUInt16LE(20, 4); ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(0, 8); ch.writeUInt16LE(0, 10); ch.writeUInt16LE(0, 12); ch.writeUInt16LE(0x21, 14);
    ch.writeUInt32LE(crc, 16); ch.writeUInt32LE(data.length, 20); ch.writeUInt32LE(data.length, 24);
    ch.writeUInt16LE(n.length, 28); ch.writeUInt32LE(0, 30); ch.writeUInt32LE(0, 34);
    ch.writeUInt32LE(0o100644 * 65536, 38); ch.writeUInt32LE(offset, 42);
    locals.push(lh, n, data);
    centrals.push(ch, n);
    offset += lh.length + n.length + data.length;
  }
  const cd = Buffer.concat(centrals), end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8); end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(cd.length, 12); end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

// A wheel: the module, METADATA, WHEEL and a RECORD with each file's hash.
function wheel(name, version, module, requires = []) {
  const di = `${name}-${version}.dist-info`;
  const files = {
    [`${name}/__init__.py`]: module,
    [`${di}/METADATA`]: `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n` +
      requires.map((r) => `Requires-Dist: ${r}\n`).join(''),
    [`${di}/WHEEL`]: 'Wheel-Version: 1.0\nGenerator: sbxtrace-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n',
  };
  let record = '';
  for (const [f, c] of Object.entries(files)) {
    const h = createHash('sha256').update(c).digest('base64url');
    record += `${f},sha256=${h},${Buffer.byteLength(c)}\n`;
  }
  files[`${di}/RECORD`] = record + `${di}/RECORD,,\n`;
  return { filename: `${name}-${version}-py3-none-any.whl`, data: zip(files) };
}

// A ustar archive, gzipped: an npm tarball (files under package/).
function tgz(files) {
  const parts = [];
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.from(content), h = Buffer.alloc(512);
    h.write(name, 0, 100); h.write('0000644\0', 100); h.write('0000000\0', 108); h.write('0000000\0', 116);
    h.write(data.length.toString(8).padStart(11, '0') + '\0', 124); h.write('00000000000\0', 136);
    h.write('        ', 148); h.write('0', 156); h.write('ustar\0', 257); h.write('00', 263);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
    parts.push(h, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  parts.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(parts));
}

function npmPackage(name, version, main, dependencies = {}) {
  return {
    name, version,
    data: tgz({
      'package/package.json': JSON.stringify({ name, version, main: 'index.js', dependencies }),
      'package/index.js': main,
    }),
    dependencies,
  };
}

// ------------------------------------------------------------ loopback servers

// An HTTP server on 127.0.0.1:0 answering from routes(base) (path → [type, body]); it
// counts and logs every request.
async function serve(routes) {
  const log = [];
  const srv = http.createServer((req, res) => {
    log.push(req.url);
    const base = `http://127.0.0.1:${srv.address().port}`;
    const hit = routes(base)[req.url.split('?')[0]];
    if (!hit) { res.statusCode = 404; res.end('not found'); return; }
    res.setHeader('content-type', hit[0]);
    res.end(hit[1]);
  });
  await new Promise((ok) => srv.listen(0, '127.0.0.1', ok));
  const port = srv.address().port;
  return { port, base: `http://127.0.0.1:${port}`, log, close: () => new Promise((ok) => srv.close(ok)) };
}

// A PEP 503 simple index of wheels (names already normalized); href(base, wheel) may point
// the link elsewhere.
function simpleIndex(wheels, href = (base, name, w) => `${base}/files/${w.filename}`) {
  return serve((base) => {
    const r = { '/simple/': ['text/html', Object.keys(wheels).map((n) => `<a href="/simple/${n}/">${n}</a>`).join('\n')] };
    for (const [name, list] of Object.entries(wheels)) {
      const links = list.map((w) => {
        const sha = createHash('sha256').update(w.data).digest('hex');
        return `<a href="${href(base, name, w)}#sha256=${sha}">${w.filename}</a>`;
      });
      r[`/simple/${name}/`] = ['text/html', `<!DOCTYPE html><html><body>\n${links.join('<br>\n')}\n</body></html>`];
      for (const w of list) r[`/files/${w.filename}`] = ['application/octet-stream', w.data];
    }
    return r;
  });
}

// A minimal npm registry: GET /NAME is the packument, its dist.tarball points back here
// (or where tarball(base, pkg) says).
function npmRegistry(pkgs, tarball = (base, p) => `${base}/${p.name}/-/${p.name}-${p.version}.tgz`) {
  return serve((base) => {
    const r = {};
    for (const p of pkgs) {
      const integrity = 'sha512-' + createHash('sha512').update(p.data).digest('base64');
      const shasum = createHash('sha1').update(p.data).digest('hex');
      r[`/${p.name}`] = ['application/json', JSON.stringify({
        name: p.name, 'dist-tags': { latest: p.version },
        versions: { [p.version]: { name: p.name, version: p.version, dependencies: p.dependencies, dist: { tarball: tarball(base, p), integrity, shasum } } },
      })];
      r[`/${p.name}/-/${p.name}-${p.version}.tgz`] = ['application/octet-stream', p.data];
    }
    return r;
  });
}

// ------------------------------------------------------------ the MCP server

function tempRoot() {
  return realpathSync(mkdtempSync(join(tmpdir(), 'sbxtrace-mcp-install-')));
}

async function withServer({ packages = '', env = {} }, fn) {
  assert.ok(existsSync(BIN), `sbxtrace binary not found at ${BIN} (set SBXTRACE_BIN)`);
  const root = tempRoot(), dataDir = join(root, 'data'), config = join(root, 'operator.toml');
  writeFileSync(config, `[server]
data_dir = "${dataDir}"

[limits]
wall_s = 600
cpu_s = 600
memory_mb = 2048
tasks = 256
disk_mb = 256
output_kb = 1024

[network]
modes = ["none", "loopback"]

${packages}`);
  const transport = new StdioClientTransport({
    command: BIN, args: ['mcp', '--data-dir', dataDir, '--config', config],
    env: { ...process.env, ...env }, stderr: 'pipe',
  });
  const stderr = [];
  transport.stderr?.on('data', (d) => stderr.push(String(d)));
  const client = new Client({ name: 'sbxtrace-install-tests', version: '0.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: CALL_TIMEOUT });
    await client.listTools(undefined, { timeout: CALL_TIMEOUT }); // validates structuredContent later
  } catch (e) {
    await transport.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
    e.message += `\nserver stderr:\n${stderr.join('')}`;
    throw e;
  }
  try {
    return await fn({ client, root, dataDir });
  } finally {
    await client.close().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

const textOf = (res) => (res?.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

async function call(client, name, args) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: CALL_TIMEOUT });
}

async function ok(client, name, args) {
  const res = await call(client, name, args);
  assert.notEqual(res.isError, true, `${name} failed: ${textOf(res)}`);
  return res.structuredContent;
}

async function failed(client, name, args) {
  const res = await call(client, name, args);
  assert.equal(res.isError, true, `${name} should have failed: ${JSON.stringify(res)}`);
  return res;
}

async function create(client, args = { policy: 'python' }) {
  return (await ok(client, 'code_create_sandbox', args)).session_id;
}

const pairs = (installed) => installed.map((p) => `${p.name}@${p.version}`).sort();

// Everything under the session's workspace on the host, relative.
function hostWorkspace(dataDir, sid) {
  const find = (d) => {
    for (const n of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, n.name);
      if (n.isDirectory() && n.name === sid) return p;
      if (n.isDirectory()) { const r = find(p); if (r) return r; }
    }
    return null;
  };
  return join(find(dataDir), 'workspace');
}

// ------------------------------------------------------------ the fixtures

const DEMO = wheel('sbxdemo', '1.2.3', 'from sbxdep import BASE\nVALUE = BASE * 2\n', ['sbxdep>=0.1']);
const DEP = wheel('sbxdep', '0.4.0', 'BASE = 21\n');
const NPM_DEMO = npmPackage('sbx-demo', '2.0.1', "module.exports = { answer: require('sbx-dep').base * 2 };\n", { 'sbx-dep': '^1.0.0' });
const NPM_DEP = npmPackage('sbx-dep', '1.1.0', 'module.exports = { base: 21 };\n');

function packagesConfig(pipIndex, npmReg, extra = '') {
  return `[packages]
pip_index = "${pipIndex}"
npm_registry = "${npmReg}"
timeout = "120s"
${extra}`;
}

// ------------------------------------------------------------ tests

describe('code_install_package', () => {
  test('pip: a hand-built wheel and its dependency from a loopback simple index, importable in a context started before, in a fresh run and in a command', TP, async () => {
    const index = await simpleIndex({ sbxdemo: [DEMO], sbxdep: [DEP] });
    try {
      await withServer({ packages: packagesConfig(`${index.base}/simple`, 'http://127.0.0.1:9/') }, async ({ client, dataDir }) => {
        const sid = await create(client);
        // a context that exists before the install: its sys.path must pick the package up
        let sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: '1 + 1' });
        assert.equal(sc.results[0]['text/plain'], '2');
        sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdemo==1.2.3'] });
        assert.equal(sc.exit_code, 0, sc.stderr);
        assert.deepEqual(pairs(sc.installed), ['sbxdemo@1.2.3', 'sbxdep@0.4.0']);
        assert.equal(sc.installed[0].name, 'sbxdemo', 'the requested package comes first');
        assert.equal(sc.network_mode, 'none', 'the session keeps its mode');
        assert.deepEqual(sc.network_allow, [`127.0.0.1:${index.port}`]);
        assert.ok(index.log.some((u) => u.startsWith('/files/sbxdemo-1.2.3')), `index log: ${index.log}`);
        assert.ok(existsSync(join(hostWorkspace(dataDir, sid), '.packages/python/sbxdemo/__init__.py')));

        sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: 'import sbxdemo\nsbxdemo.VALUE' });
        assert.equal(sc.results[0]['text/plain'], '42');
        sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', fresh: true, code: 'import sbxdemo, sbxdep\nprint(sbxdemo.VALUE, sbxdep.__file__)' });
        assert.equal(sc.stdout, '42 /workspace/.packages/python/sbxdep/__init__.py\n');
        sc = await ok(client, 'code_run_command', { session_id: sid, argv: ['python3', '-c', 'import sbxdemo; print(sbxdemo.VALUE)'] });
        assert.equal(sc.stdout, '42\n');
        // a new context after the install too
        sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', context_id: 'other', code: 'from sbxdemo import VALUE\nVALUE' });
        assert.equal(sc.results[0]['text/plain'], '42');
      });
    } finally { await index.close(); }
  });

  test('npm: a hand-built tarball and its dependency from a loopback registry, requirable in a context, a fresh run and a script in /workspace', T, async () => {
    const reg = await npmRegistry([NPM_DEMO, NPM_DEP]);
    try {
      await withServer({ packages: packagesConfig('http://127.0.0.1:9/simple', `${reg.base}/`) }, async ({ client, dataDir }) => {
        const sid = await create(client);
        let sc = await ok(client, 'code_execute', { session_id: sid, language: 'javascript', code: '6 * 7' });
        assert.equal(sc.results[0]['text/plain'], '42');
        sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: ['sbx-demo@^2.0.0'] });
        assert.equal(sc.exit_code, 0, sc.stderr);
        assert.deepEqual(pairs(sc.installed), ['sbx-demo@2.0.1', 'sbx-dep@1.1.0']);
        assert.equal(sc.installed[0].name, 'sbx-demo');
        assert.equal(sc.network_mode, 'none');
        assert.ok(reg.log.includes('/sbx-demo/-/sbx-demo-2.0.1.tgz'), `registry log: ${reg.log}`);
        assert.ok(existsSync(join(hostWorkspace(dataDir, sid), 'node_modules/sbx-demo/index.js')));

        sc = await ok(client, 'code_execute', { session_id: sid, language: 'javascript', code: "require('sbx-demo').answer" });
        assert.equal(sc.results[0]['text/plain'], '42');
        sc = await ok(client, 'code_execute', { session_id: sid, language: 'javascript', fresh: true, code: "console.log(require('sbx-demo').answer)" });
        assert.equal(sc.stdout, '42\n');
        await ok(client, 'code_write_file', { session_id: sid, path: 'main.js', content: "console.log(require('sbx-demo').answer + 1)\n" });
        sc = await ok(client, 'code_run_command', { session_id: sid, argv: ['node', 'main.js'] });
        assert.equal(sc.stdout, '43\n');
        // installing again is fine: what is already there is reported, nothing else
        sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: ['sbx-demo'] });
        assert.deepEqual(pairs(sc.installed), ['sbx-demo@2.0.1']);
      });
    } finally { await reg.close(); }
  });

  // the decoys serve the real packages: had a connect got through, the install would succeed
  test('npm told to reach another host is refused there: a packument whose tarball is on another loopback port', T, async () => {
    const decoy = await npmRegistry([NPM_DEMO, NPM_DEP]);
    const reg = await npmRegistry([{ ...NPM_DEMO, dependencies: {} }], (base, p) => `${decoy.base}/${p.name}/-/${p.name}-${p.version}.tgz`);
    try {
      await withServer({ packages: packagesConfig('http://127.0.0.1:9/simple', `${reg.base}/`) }, async ({ client, dataDir }) => {
        const sid = await create(client);
        const sc = (await failed(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: ['sbx-demo'] })).structuredContent;
        assert.notEqual(sc.exit_code, 0);
        assert.deepEqual(sc.installed, []);
        assert.deepEqual(sc.network_allow, [`127.0.0.1:${reg.port}`]);
        assert.ok(reg.log.includes('/sbx-demo'), 'the packument came from the registry');
        assert.deepEqual(decoy.log, [], 'npm reached a host that is not the registry');
        assert.ok(!existsSync(join(hostWorkspace(dataDir, sid), 'node_modules/sbx-demo')));
      });
    } finally { await Promise.all([decoy.close(), reg.close()]); }
  });

  test('pip told to reach another host is refused there: an index page whose wheel is on another loopback port', TP, async () => {
    const decoy = await simpleIndex({ sbxdemo: [DEMO], sbxdep: [DEP] });
    const index = await simpleIndex({ sbxdep: [DEP] }, (base, name, w) => `${decoy.base}/files/${w.filename}`);
    try {
      await withServer({ packages: packagesConfig(`${index.base}/simple`, 'http://127.0.0.1:9/') }, async ({ client, dataDir }) => {
        const sid = await create(client);
        const sc = (await failed(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdep'] })).structuredContent;
        assert.notEqual(sc.exit_code, 0);
        assert.deepEqual(sc.installed, []);
        assert.ok(index.log.includes('/simple/sbxdep/'), `index log: ${index.log}`);
        assert.deepEqual(decoy.log, [], 'pip reached a host that is not the index');
        assert.ok(!existsSync(join(hostWorkspace(dataDir, sid), '.packages/python/sbxdep')));
      });
    } finally { await Promise.all([decoy.close(), index.close()]); }
  });

  test('files the code planted in /workspace do not steer the install: .npmrc, pip.conf under HOME, a pip module, lifecycle scripts', TP, async () => {
    const decoyNpm = await npmRegistry([NPM_DEMO, NPM_DEP]);
    const decoyPip = await simpleIndex({ sbxdemo: [DEMO], sbxdep: [DEP] });
    const scripted = npmPackage('sbx-scripted', '1.0.0', 'module.exports = 1;\n');
    scripted.data = tgz({
      'package/package.json': JSON.stringify({ name: 'sbx-scripted', version: '1.0.0', scripts: { preinstall: 'touch /workspace/SCRIPT_RAN', postinstall: 'touch /workspace/SCRIPT_RAN' } }),
      'package/index.js': 'module.exports = 1;\n',
    });
    const reg = await npmRegistry([NPM_DEMO, NPM_DEP, scripted]);
    const index = await simpleIndex({ sbxdemo: [DEMO], sbxdep: [DEP] });
    try {
      await withServer({ packages: packagesConfig(`${index.base}/simple`, `${reg.base}/`) }, async ({ client, dataDir }) => {
        const sid = await create(client);
        const plant = (path, content) => ok(client, 'code_write_file', { session_id: sid, path, content });
        const phone = `import urllib.request, pathlib\npathlib.Path("/workspace/PLANTED_RAN").touch()\ntry:\n    urllib.request.urlopen("${decoyPip.base}/planted", timeout=3)\nexcept Exception:\n    pass\n`;
        await plant('.npmrc', `registry=${decoyNpm.base}/\nignore-scripts=false\ngit=/workspace/evil.sh\n`);
        await plant('.config/pip/pip.conf', `[global]\nindex-url = ${decoyPip.base}/simple\n`);
        await plant('pip/__init__.py', phone);
        await plant('pip/__main__.py', phone);
        await plant('runpy.py', phone);
        await plant('.packages/python/sitecustomize.py', phone);

        let sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdemo'] });
        assert.deepEqual(pairs(sc.installed), ['sbxdemo@1.2.3', 'sbxdep@0.4.0']);
        sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: ['sbx-demo', 'sbx-scripted'] });
        assert.deepEqual(pairs(sc.installed), ['sbx-demo@2.0.1', 'sbx-dep@1.1.0', 'sbx-scripted@1.0.0']);
        assert.deepEqual(decoyNpm.log, [], 'npm followed the planted .npmrc');
        assert.deepEqual(decoyPip.log, [], 'pip followed the planted config or ran planted code');
        const ws = hostWorkspace(dataDir, sid);
        assert.ok(!existsSync(join(ws, 'PLANTED_RAN')), 'planted Python code ran in the install');
        assert.ok(!existsSync(join(ws, 'SCRIPT_RAN')), 'a lifecycle script ran');
        assert.ok(existsSync(join(ws, 'node_modules/sbx-scripted/index.js')));
      });
    } finally {
      await Promise.all([decoyNpm.close(), decoyPip.close(), reg.close(), index.close()]);
    }
  });

  test('the code of the session still has no network: not to the registry the install just used', TP, async () => {
    const index = await simpleIndex({ sbxdemo: [DEMO], sbxdep: [DEP] });
    try {
      await withServer({ packages: packagesConfig(`${index.base}/simple`, 'http://127.0.0.1:9/') }, async ({ client }) => {
        for (const network of [undefined, { mode: 'loopback' }]) {
          const sid = await create(client, { policy: 'python', ...(network ? { network } : {}) });
          await ok(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdep'] });
          const seen = index.log.length;
          const probe = `import socket\ntry:\n    s = socket.create_connection(("127.0.0.1", ${index.port}), timeout=5)\n    s.sendall(b"GET /simple/ HTTP/1.0\\r\\n\\r\\n")\n    print("reached", s.recv(100)[:12])\nexcept OSError as e:\n    print("refused", e.errno)\n`;
          for (const extra of [{}, { fresh: true }]) {
            const sc = await ok(client, 'code_execute', { session_id: sid, language: 'python', code: probe, ...extra });
            if (network) {
              // loopback sessions may reach loopback: that is the session's own mode, not
              // the install's; the point is that the mode did not change
              assert.equal(sc.network_mode, 'loopback');
            } else {
              assert.match(sc.stdout, /^refused/, sc.stdout + sc.stderr);
              assert.equal(sc.network_mode, 'none');
            }
          }
          if (!network) assert.equal(index.log.length, seen, 'the code reached the index');
        }
      });
    } finally { await index.close(); }
  });

  test('packages are validated by a strict pattern; unknown registries, disabled managers and secret sessions are refused', TP, async () => {
    const index = await simpleIndex({ sbxdep: [DEP] });
    try {
      await withServer({
        packages: packagesConfig(`${index.base}/simple`, 'http://127.0.0.1:9/', `managers = ["pip"]\nregistries = ["${index.base}/simple"]\n`),
      }, async ({ client }) => {
        const sid = await create(client);
        const badPip = ['sbxdep; rm -rf /', '--index-url=http://example.org/simple', '-r/etc/passwd',
          'git+https://example.org/x.git', '../sbxdep', 'sbxdep @ http://example.org/x.whl',
          'sbxdep==1.0;python_version>"3"', 'sbxdep ==1', '$(id)', 'sbxdep==', '.sbxdep', 'sbxdep[x'];
        for (const spec of badPip) {
          const res = await failed(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdep', spec] });
          assert.match(textOf(res), /packages\[1\]/, `${spec}: ${textOf(res)}`);
        }
        const res = await failed(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: ['left-pad'] });
        assert.match(textOf(res), /not enabled/);
        const r2 = await failed(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdep'], registry: 'http://127.0.0.1:1/simple' });
        assert.match(textOf(r2), /not one this server offers/);
        assert.deepEqual(index.log, [], 'a refused call reached the index');
        // a listed registry, and specifiers of every kind the pattern allows
        const sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['SbxDep[extra1,extra2]>=0.1,<1,!=0.3.*'], registry: `${index.base}/simple` });
        assert.deepEqual(pairs(sc.installed), ['sbxdep@0.4.0']);
        // secret data closes the network for good: installs too
        const sid2 = await create(client);
        await ok(client, 'code_mark_private', { session_id: sid2, level: 'secret' });
        const r3 = await failed(client, 'code_install_package', { session_id: sid2, manager: 'pip', packages: ['sbxdep'] });
        assert.match(textOf(r3), /secret/);
      });
      await withServer({ packages: packagesConfig(`${index.base}/simple`, 'http://127.0.0.1:9/') }, async ({ client }) => {
        const sid = await create(client);
        const badNpm = ['sbx-demo@http://example.org/x.tgz', 'file:../x', 'github:a/b', 'a/b', 'x@npm:y',
          '--registry=http://example.org/', '@scope', '@scope/', 'x@', 'x@ 1', 'x@../y', '.x', '_x'];
        for (const spec of badNpm) {
          const res = await failed(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: [spec] });
          assert.match(textOf(res), /packages\[0\]/, `${spec}: ${textOf(res)}`);
        }
      });
    } finally { await index.close(); }
  });

  test('without registries in the config, the host\'s pip (PIP_INDEX_URL) and npm (npm_config_registry) configuration is used', TP, async () => {
    const index = await simpleIndex({ sbxdemo: [DEMO], sbxdep: [DEP] });
    const reg = await npmRegistry([NPM_DEMO, NPM_DEP]);
    try {
      await withServer({
        env: { PIP_INDEX_URL: `${index.base}/simple`, npm_config_registry: `${reg.base}/` },
      }, async ({ client }) => {
        const sid = await create(client);
        let sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'pip', packages: ['sbxdemo'] });
        assert.equal(sc.registry, `${index.base}/simple`);
        assert.equal(sc.registry_source, 'PIP_INDEX_URL');
        assert.deepEqual(pairs(sc.installed), ['sbxdemo@1.2.3', 'sbxdep@0.4.0']);
        sc = await ok(client, 'code_install_package', { session_id: sid, manager: 'npm', packages: ['sbx-demo'] });
        assert.equal(sc.registry, `${reg.base}/`);
        assert.equal(sc.registry_source, 'npm config');
        sc = await ok(client, 'code_execute', { session_id: sid, language: 'shell', code: "python3 -c 'import sbxdemo; print(sbxdemo.VALUE)'; node -e \"console.log(require('sbx-demo').answer)\"" });
        assert.equal(sc.stdout, '42\n42\n');
      });
    } finally { await Promise.all([index.close(), reg.close()]); }
  });
});
