#!/usr/bin/env python3
"""Fails when a function of the files listed below is longer than MAX_LINES.

  check-function-length.py SOURCE_ROOT   check FILES under SOURCE_ROOT
  check-function-length.py --self-test   check the checker on made-up files

Issue #22 ("a 555-line function", STYLE.md): tracer_run() became a run state and its phases
(tracer/run.c, tracer/loop.c), and the command's setup and the keeper their steps
(tracer/launch.c), no function over about 80 lines; the budgets were split by kind
(tracer/budget*.c, issue #22 item 3). This keeps them so. A file
joins FILES once its functions are short; a listed file that is gone is an error (the list
must follow renames). Functions are found by the layout .clang-format gives them (the lint
suite checks it): a function's opening brace alone on a line at column 0, its closing brace
alone on a line at column 0. A function's length is the number of lines from its name to its
closing brace, both included.
"""

import os
import re
import sys
import tempfile

MAX_LINES = 90

FILES = [
    "tracer/budget-cpu.c",
    "tracer/budget-disk.c",
    "tracer/budget-sample.c",
    "tracer/budget-shm.c",
    "tracer/budget-tasks.c",
    "tracer/budget.c",
    "tracer/launch.c",
    "tracer/loop.c",
    "tracer/run.c",
    "tracer/backtrace.c",
    "unwind/frame-pointer.c",
    "unwind/libunwind.c",
    "unwind/maps.c",
    "unwind/session.c",
]

# the identifier before the parameter list: "static int foo(" -> "foo"
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(text):
    """(name, first line, length) of every function definition in text."""
    lines = text.split("\n")
    found = []
    i = 0
    while i < len(lines):
        if lines[i] != "{":
            i += 1
            continue
        # the signature: back to the line that starts at column 0 with the return type
        start = i - 1
        while start > 0 and lines[start][:1] in ("\t", " "):
            start -= 1
        signature = " ".join(lines[start:i])
        m = NAME.search(signature)
        name = m.group(1) if m else "?"
        end = i + 1
        while end < len(lines) and lines[end] != "}":
            end += 1
        found.append((name, start + 1, end - start + 1))
        i = end + 1
    return found


def check_file(path, shown):
    bad = []
    with open(path, encoding="utf-8") as f:
        for name, line, length in functions(f.read()):
            if length > MAX_LINES:
                bad.append(f"{shown}:{line}: {name}() is {length} lines (at most {MAX_LINES})")
    return bad


def check(root):
    bad = []
    for rel in FILES:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            bad.append(f"{rel}: listed in FILES of {sys.argv[0]} but does not exist")
            continue
        bad += check_file(path, rel)
    for b in bad:
        print(b)
    return 1 if bad else 0


def self_test():
    body = "\n".join("\tx += %d;" % i for i in range(100))
    long_fn = "static int long_one(int x,\n\t\t    int y)\n{\n" + body + "\n\treturn x;\n}\n"
    short_fn = "int short_one(void)\n{\n\treturn 0;\n}\n"
    # not functions: a table and a struct, whose braces are not alone on their lines
    table = "static const int t[] = {\n" + ",\n".join("\t%d" % i for i in range(120)) + "\n};\n"
    struct = "typedef struct S {\n" + "\n".join("\tint f%d;" % i for i in range(120)) + "\n} S;\n"
    text = "/* made up */\n#include <stdio.h>\n\n" + table + "\n" + struct + "\n" + short_fn
    text += "\n" + long_fn
    failures = []

    found = {name: (line, length) for name, line, length in functions(text)}
    if set(found) != {"short_one", "long_one"}:
        failures.append(f"functions found: {sorted(found)}")
    elif found["long_one"][1] != 105 or found["short_one"][1] != 4:
        failures.append(f"lengths: {found}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "made-up.c")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        bad = check_file(path, "made-up.c")
        if len(bad) != 1 or "long_one()" not in bad[0]:
            failures.append(f"the long function was not reported alone: {bad}")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(long_fn, ""))
        if check_file(path, "made-up.c"):
            failures.append("a file without a long function was reported")
    for f in failures:
        print("self-test:", f)
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    return check(sys.argv[1])


if __name__ == "__main__":
    sys.exit(main())
