# TAP output of the Python integration tests (one copy for all of them): tap() records a
# result and prints its line, skip() a TAP skip with its reason (counted, never a silent
# pass); a test ends with `return 0 if all(results) else 1`. And the two ways the verdict
# tests ask sbxtrace what it decided: `run --json` and `check`.
import json
import subprocess

results = []


def tap(ok, name, detail=''):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}", flush=True)
    if not ok and detail:
        for line in str(detail).splitlines():
            print(f'# {line}')


def skip(name, why):
    results.append(True)
    print(f'ok {len(results)} - {name} # SKIP {why}', flush=True)


# ---- sbxtrace's two verdicts: `run --json` and `check`, with -s settings ----

def sets_args(sets):
    return [a for s in sets for a in ('-s', s)]


def run_json(sbx, ws, sets, policy, argv, extra=()):
    """`sbxtrace run --json -w WS [extra] -s… POLICY -- argv`: (the JSON result, stderr), or
    (None, what went wrong)."""
    args = [sbx, 'run', '--json', '-w', ws] + list(extra) + sets_args(sets) + [policy, '--']
    p = subprocess.run(args + list(argv), capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=120)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr
    except (ValueError, IndexError):
        return None, f'exit {p.returncode}: {p.stdout} {p.stderr}'


def check(sbx, ws, sets, policy):
    """`sbxtrace check -w WS -s… POLICY`: the finished process (its report is on stderr)."""
    return subprocess.run([sbx, 'check', '-w', ws] + sets_args(sets) + [policy],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
