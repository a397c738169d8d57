// sbxtrace's JavaScript context driver (docs/agents.md, "Stateful contexts"): one vm context
// kept between calls, inside the session's sandbox. Protocol as agent/drivers/python.py:
// requests "<id> <base64>\n" on stdin, replies "\x1eSBX" + JSON + "\x1f" on stdout; the
// code's console output goes to the same stdout and stderr (synchronous for pipes on Linux).
'use strict';
const fs = require('fs');
const vm = require('vm');
const util = require('util');

const protoIn = 0; // the server's pipe; the code should not read stdin in a context
// require() resolves as a script in the cwd (/workspace) would, as Node's REPL does: the
// packages code_install_package put in /workspace/node_modules, and the code's own files
const cwdRequire = require('module').createRequire(require('path').join(process.cwd(), '<repl>'));
const ctx = vm.createContext({
  console, process, require: cwdRequire, Buffer, setTimeout, clearTimeout, setInterval, clearInterval,
  setImmediate, clearImmediate, URL, TextEncoder, TextDecoder, fetch: globalThis.fetch,
});
ctx.globalThis = ctx;
process.on('SIGINT', () => {}); // breakOnSigint interrupts running code; otherwise ignore

function send(obj) {
  // a barrier on stderr first: the server waits for it, so no stderr of this call arrives
  // after the result
  if (obj.t === 'done') fs.writeSync(2, '\x1eSBX' + JSON.stringify({ t: 'err-done', id: obj.id }) + '\x1f');
  fs.writeSync(1, '\x1eSBX' + JSON.stringify(obj) + '\x1f');
}

let pending = Buffer.alloc(0);
function readLine() {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl >= 0) {
      const line = pending.subarray(0, nl).toString();
      pending = pending.subarray(nl + 1);
      return line;
    }
    const buf = Buffer.alloc(65536);
    let n;
    try {
      n = fs.readSync(protoIn, buf, 0, buf.length, null);
    } catch (e) {
      if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
      throw e;
    }
    if (n === 0) return null;
    pending = Buffer.concat([pending, buf.subarray(0, n)]);
  }
}

async function main() {
  send({ t: 'ready', pid: process.pid });
  let cell = 0;
  for (;;) {
    const line = readLine();
    if (line === null) break;
    const sp = line.indexOf(' ');
    if (sp < 0) continue;
    const id = Number(line.slice(0, sp));
    const code = Buffer.from(line.slice(sp + 1), 'base64').toString();
    const reply = { t: 'done', id, exit_code: 0, results: [] };
    try {
      cell += 1;
      let value = vm.runInContext(code, ctx, { filename: `<cell-${cell}>`, breakOnSigint: true });
      if (value && typeof value.then === 'function') value = await value;
      if (value !== undefined) reply.results.push({ 'text/plain': util.inspect(value) });
    } catch (e) {
      // errors of the vm context are of its own realm: not instanceof our Error
      const isErr = e !== null && typeof e === 'object' && typeof e.stack === 'string';
      const name = isErr ? (e.name || 'Error') : 'Error';
      const value = isErr ? String(e.message) : util.inspect(e);
      // the cell's frames, not the driver's
      const stack = isErr
        ? e.stack.split('\n').filter((l) => !l.includes('/run/sbxtrace/driver.js') && !l.includes('(node:')).join('\n')
        : `Uncaught ${value}`;
      reply.exit_code = 1;
      reply.error = { name, value, traceback: stack };
      fs.writeSync(2, stack + '\n');
    }
    send(reply);
  }
  process.exit(0);
}
main();
