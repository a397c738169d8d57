# TAP output of the Python integration tests (one copy for all of them): tap() records a
# result and prints its line, skip() a TAP skip with its reason (counted, never a silent
# pass); a test ends with `return 0 if all(results) else 1`.
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
