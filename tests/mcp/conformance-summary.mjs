// Summarise a conformance results directory (-o DIR of the conformance CLI).
// usage: node conformance-summary.mjs RESULTS_DIR [BASELINE.yml] [SCENARIO...]
// Prints one line per scenario and a closing "N passed, N failed" (checks).
// Exit 0 when every failed scenario is in the baseline and no baseline entry
// passed (the CLI's own rule: FAILURE or WARNING fails a scenario); else 1.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const [dir, baselineFile, ...expectedRun] = process.argv.slice(2);
if (!dir) {
  console.error('usage: conformance-summary.mjs RESULTS_DIR [BASELINE] [SCENARIO...]');
  process.exit(2);
}

// Baseline: the `server:` list; the comment lines just above an entry are its reason.
const baseline = new Map();
if (baselineFile) {
  let inServer = false;
  let reason = [];
  for (const raw of readFileSync(baselineFile, 'utf8').split('\n')) {
    const line = raw.replace(/\s+$/, '');
    if (/^\S/.test(line) && !line.startsWith('#')) {
      inServer = /^server:\s*$/.test(line);
      reason = [];
      continue;
    }
    const c = line.match(/^\s*#\s?(.*)$/);
    if (c) { reason.push(c[1]); continue; }
    const e = line.match(/^\s*-\s*["']?([A-Za-z0-9_.-]+)["']?\s*(?:#\s*(.*))?$/);
    if (e && inServer) {
      baseline.set(e[1], (e[2] || reason.join(' ')).trim() || '(no reason given)');
    }
    if (line.trim() === '') reason = [];
    else if (!c) reason = [];
  }
}

const TS = /-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/;
const results = new Map(); // scenario -> checks | null (no checks.json)
for (const name of existsSync(dir) ? readdirSync(dir).sort() : []) {
  if (!name.startsWith('server-') || !TS.test(name)) continue;
  const scenario = name.slice('server-'.length).replace(TS, '');
  const f = join(dir, name, 'checks.json');
  let checks = null;
  if (existsSync(f)) {
    try { checks = JSON.parse(readFileSync(f, 'utf8')); } catch { checks = null; }
  }
  results.set(scenario, checks);
}
for (const s of expectedRun) if (!results.has(s)) results.set(s, null);

let passed = 0, failed = 0, bad = 0;
for (const [scenario, checks] of results) {
  const expected = baseline.get(scenario);
  if (checks === null) {
    failed += 1;
    if (expected) {
      console.log(`XFAIL ${scenario}: no checks.json (expected: ${expected})`);
    } else {
      bad += 1;
      console.log(`FAIL  ${scenario}: no checks.json (the scenario crashed or did not run)`);
    }
    continue;
  }
  const ok = checks.filter((c) => c.status === 'SUCCESS').length;
  const ko = checks.filter((c) => c.status === 'FAILURE');
  const warn = checks.filter((c) => c.status === 'WARNING');
  passed += ok;
  failed += ko.length;
  const counts = `${ok} passed, ${ko.length} failed` + (warn.length ? `, ${warn.length} warnings` : '');
  const first = [...ko, ...warn][0];
  const why = first ? ` [${first.id}] ${first.errorMessage || first.description || ''}`.replace(/\s+/g, ' ') : '';
  if (ko.length || warn.length) {
    if (expected) {
      console.log(`XFAIL ${scenario}: ${counts} (expected: ${expected})`);
    } else {
      bad += 1;
      console.log(`FAIL  ${scenario}: ${counts};${why}`);
    }
  } else if (expected) {
    bad += 1;
    console.log(`XPASS ${scenario}: ${counts} (stale baseline entry: remove it)`);
  } else {
    console.log(`PASS  ${scenario}: ${counts}`);
  }
}
if (results.size === 0) {
  console.log(`no scenario results in ${dir}`);
  bad += 1;
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(bad ? 1 : 0);
