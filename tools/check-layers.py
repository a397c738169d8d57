#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks that each layer includes only the layers below it (docs/architecture.md).

Reads every #include "dir/..." of the C sources and headers in the layer directories of
SOURCE_ROOT (default: the current directory) and fails, naming file, line and header, when
one reaches a layer its own may not include, or another layer's internal header. tests/ and
bench/ may include anything and are not read. --self-test checks the checker on a made-up
tree (a forbidden include must be found).
"""
import os
import re
import sys
import tempfile

# Which headers each layer may include, as path prefixes. Keep in step with the table in
# docs/architecture.md.
ALLOWED = {
    'common': ['common/'],
    'policy': ['common/', 'policy/'],
    'audit': ['common/', 'policy/', 'audit/'],
    'emulation': ['common/', 'policy/', 'emulation/'],
    # net's handlers take the handler interface from common/handler.h, and AF_UNIX names
    # resolve in the file-system view through its host (EmuHost.unix_names)
    'net': ['common/', 'policy/', 'net/'],
    # the syscall table names the handlers of both emulation/ and net/, and gives audit/ its
    # argument layouts
    'syscalls': ['common/', 'policy/', 'audit/', 'emulation/', 'net/', 'syscalls/'],
    # the unwinder fills the audit records' frames (AuditFrame) and nothing else of audit/;
    # the view's names of modules come from tracer/ through UnwindHost
    'unwind': ['common/', 'audit/audit.h', 'unwind/'],
    'tracer': ['common/', 'policy/', 'audit/', 'emulation/', 'net/', 'syscalls/', 'unwind/',
               'tracer/'],
    # the agent runs `sbxtrace run` processes, never tracer/; its file tools resolve paths
    # with the view's resolver
    'agent': ['common/', 'policy/', 'agent/', 'emulation/path/view.h'],
    'cli': ['common/', 'policy/', 'audit/', 'syscalls/', 'tracer/', 'agent/', 'cli/'],
}

# Layers that never include each other, in either direction, whatever ALLOWED or KNOWN say:
# both hold syscall handlers, and what one needs of the other goes through the handler
# interface (common/handler.h) and the host that fills it (issue 22). A lower layer that
# needs a higher one gets an interface (STYLE.md).
APART = [('emulation', 'net')]

# Known exceptions, (file, header): each one a debt to pay, not a precedent.
# None today: the last one, emulation/fs-open.c including net/handlers.h for the network
# ratchet, went when the ratchet became a hook of EmuHost (now common/handler.h).
KNOWN = set()

NOT_LAYERS = {'tests', 'bench', 'build', 'debian', 'deploy', 'docs', 'man', 'policies', 'python',
              'shell-completion', 'tools'}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def layer_files(root):
    for top in sorted(os.listdir(root)):
        path = os.path.join(root, top)
        if top.startswith('.') or top in NOT_LAYERS or not os.path.isdir(path):
            continue
        # a build directory (build-asan from tests/run-all.sh, any other name too): meson's
        # generated files, not a layer
        if os.path.isdir(os.path.join(path, 'meson-private')):
            continue
        for d, dirs, files in os.walk(path):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(('.c', '.h')):
                    yield top, os.path.relpath(os.path.join(d, f), root)


def apart(layer, target):
    return any({layer, target} == set(pair) for pair in APART)


def check(root, known=KNOWN):
    problems = []
    used = set()
    for a, b in APART:
        for x, y in ((a, b), (b, a)):
            if any(p.startswith(y + '/') for p in ALLOWED.get(x, [])):
                problems.append(f'tools/check-layers.py: ALLOWED lets {x}/ include {y}/, '
                                f'which APART forbids')
    for layer, rel in layer_files(root):
        if layer not in ALLOWED:
            problems.append(f'{rel}: layer {layer}/ has no rule in tools/check-layers.py')
            continue
        with open(os.path.join(root, rel), encoding='utf-8', errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or '/' not in m.group(1):
                    continue  # "drivers.h" and the like: generated, same directory
                header = m.group(1)
                target = header.split('/', 1)[0]
                if apart(layer, target):
                    used.add((rel, header))  # listed or not: no exception excuses it
                    problems.append(f'{rel}:{n}: {layer}/ and {target}/ never include each '
                                    f'other: "{header}" (common/handler.h, EmuHost)')
                    continue
                if (rel, header) in known:
                    used.add((rel, header))
                    continue
                if not any(header.startswith(p) for p in ALLOWED[layer]):
                    problems.append(f'{rel}:{n}: {layer}/ may not include "{header}"')
                elif target != layer and os.path.basename(header).endswith('internal.h'):
                    problems.append(f'{rel}:{n}: "{header}" is internal to {target}/')
    for rel, header in sorted(known - used):
        problems.append(f'{rel}: no longer includes "{header}": remove the known exception')
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), 'w') as f:
                f.write(text)
        write('policy/ok.c', '#include "common/log.h"\n#include <stdio.h>\n')
        write('emulation/up.c', '#include "tracer/tracer.h"\n')
        write('net/internal.c', '#include "emulation/path/internal.h"\n')
        write('net/view.c', '#include "emulation/path/view.h"\n')
        write('emulation/sock.c', '#include "net/handlers.h"\n')
        write('tracer/private.c', '#include "net/internal.h"\n')
        write('newlayer/x.c', '\n')
        write('tests/anything.c', '#include "tracer/internal.h"\n')
        write('build-x/meson-private/sanitycheckc.c', '\n')
        write('build-x/config.h', '#include "tracer/internal.h"\n')
        # a known exception does not excuse an include between layers kept apart
        got = check(root, {('emulation/up.c', 'net/net.h'), ('net/view.c', 'emulation/path/view.h')})
        want = ['emulation/sock.c:1: emulation/ and net/ never include each other: '
                '"net/handlers.h" (common/handler.h, EmuHost)',
                'emulation/up.c:1: emulation/ may not include "tracer/tracer.h"',
                'net/internal.c:1: net/ and emulation/ never include each other: '
                '"emulation/path/internal.h" (common/handler.h, EmuHost)',
                'net/view.c:1: net/ and emulation/ never include each other: '
                '"emulation/path/view.h" (common/handler.h, EmuHost)',
                'newlayer/x.c: layer newlayer/ has no rule in tools/check-layers.py',
                'tracer/private.c:1: "net/internal.h" is internal to net/',
                'emulation/up.c: no longer includes "net/net.h": remove the known exception']
        if got != want:
            print('self-test failed:\n  got  %s\n  want %s' % (got, want))
            return 1
    print('self-test: ok')
    return 0


def main():
    if '--self-test' in sys.argv[1:]:
        return self_test()
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    root = args[0] if args else '.'
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f'{len(problems)} include(s) against the layers (docs/architecture.md)')
        return 1
    print('layers: ok (%d known exception(s))' % len(KNOWN))
    return 0


if __name__ == '__main__':
    sys.exit(main())
