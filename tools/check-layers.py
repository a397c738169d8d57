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
    # net's handlers take the handler interface from common/handler.h; AF_UNIX names still
    # resolve through the file-system view
    'net': ['common/', 'policy/', 'net/', 'emulation/path/view.h'],
    # the syscall table names the handlers of both emulation/ and net/, and gives audit/ its
    # argument layouts
    'syscalls': ['common/', 'policy/', 'audit/', 'emulation/', 'net/', 'syscalls/'],
    'tracer': ['common/', 'policy/', 'audit/', 'emulation/', 'net/', 'syscalls/', 'tracer/'],
    # the agent runs `sbxtrace run` processes, never tracer/; its file tools resolve paths
    # with the view's resolver
    'agent': ['common/', 'policy/', 'agent/', 'emulation/path/view.h'],
    'cli': ['common/', 'policy/', 'audit/', 'syscalls/', 'tracer/', 'agent/', 'cli/'],
}

# Known exceptions, (file, header): each one a debt to pay, not a precedent.
# None today: the last one, emulation/fs-open.c including net/handlers.h for the network
# ratchet, went when the ratchet became a hook of EmuHost (emulation/emu.h).
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


def check(root, known=KNOWN):
    problems = []
    used = set()
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
        write('tracer/private.c', '#include "net/internal.h"\n')
        write('newlayer/x.c', '\n')
        write('tests/anything.c', '#include "tracer/internal.h"\n')
        write('build-x/meson-private/sanitycheckc.c', '\n')
        write('build-x/config.h', '#include "tracer/internal.h"\n')
        got = check(root, {('emulation/up.c', 'net/net.h')})
        want = ['emulation/up.c:1: emulation/ may not include "tracer/tracer.h"',
                'net/internal.c:1: net/ may not include "emulation/path/internal.h"',
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
