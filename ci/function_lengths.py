#!/usr/bin/env python3
"""Fails when a function in harness/ is longer than the limit (150 lines by default): the lines
from the opening brace of a function body to its closing brace, for every function defined at
namespace level or in a class body (lambdas inside a function count as part of it). Comments, strings and raw
strings are blanked first, so braces inside them do not count.

Usage: python3 ci/function_lengths.py [LIMIT] [--top N]
"""
import pathlib
import re
import sys


def blank(text):
    keep_lines = lambda m: "\n" * m.group(0).count("\n")
    text = re.sub(r'R"(\w*)\((?:.|\n)*?\)\1"', lambda m: '""' + keep_lines(m), text)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*(?:.|\n)*?\*/", keep_lines, text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)


def functions(path):
    text = blank(path.read_text())
    stack, line = [], 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
        elif ch == "{":
            before = text[max(0, i - 300):i].rstrip()
            # A namespace or a class body: the functions directly inside it are counted.
            is_scope = (re.search(r"namespace(\s+[\w:]+)?\s*$", before) is not None
                        or re.search(r"\b(class|struct|union)\s+[\w:]+(\s+final)?(\s*:[^;{}()]*)?$", before) is not None)
            is_function = not is_scope and re.search(
                r"(\)|\bconst|\bnoexcept|\boverride|->\s*[\w:<>,\s]+)\s*$", before) is not None
            stack.append((is_scope, is_function, line, all(s[0] for s in stack)))
        elif ch == "}" and stack:
            _, is_function, start, at_namespace_level = stack.pop()
            if is_function and at_namespace_level:
                yield line - start + 1, f"{path}:{start}"


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    limit = int(args[0]) if args else 150
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 3
    root = pathlib.Path(__file__).resolve().parent.parent
    found = sorted((f for p in sorted([*root.glob("harness/**/*.cxx"), *root.glob("harness/**/*.hxx")]) for f in functions(p.relative_to(root))),
                   reverse=True)
    over = [f for f in found if f[0] > limit]
    for length, where in over:
        print(f"{where}: a function of {length} lines (at most {limit})", file=sys.stderr)
    print(f"function lengths: {len(found)} functions in harness/, the longest "
          + ", ".join(f"{n} ({w})" for n, w in found[:top]) + f"; {len(over)} over {limit} lines")
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
