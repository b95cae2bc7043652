#!/usr/bin/env python3
"""Fails when a production C++ function is longer than the limit (80 lines).

    scripts/check_function_length.py [--limit N] ROOT_OR_FILE...

A directory is searched for *.cpp and *.hpp files, leaving out tests (*_test.cpp and
tests/), benchmarks (bench/), fuzz targets (fuzz/) and build trees (build*/);
a file named on the command line is checked whatever its name. A function's
length runs from the first line of its declaration (template and return type
included) to its closing brace. Each function over the limit is printed as
`file:line: NAME is N lines, over the limit of L` and the exit code is 1.

Functions are found by matching braces in the source with comments, string
and character literals and preprocessor lines blanked out: a brace at
namespace or class scope whose declaration has a parameter list opens a
function body (a constructor's member initializers, `x_{y}`, are skipped);
braces inside a body (lambdas, local classes) count toward that function.
"""

import argparse
import os
import re
import sys

LIMIT = 80
SKIPPED_DIRS = {"tests", "bench", "fuzz"}


def blank_out(text):
    """The text with comments, literals and preprocessor lines replaced by
    spaces (newlines kept), so braces and lines keep their positions."""
    out = list(text)
    i, n = 0, len(text)

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    at_line_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if at_line_start and c == "#":
            end = i
            while end < n and (text[end] != "\n" or text[end - 1] == "\\"):
                end += 1
            blank(i, end)
            i = end
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and not (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
            open_paren = text.find("(", i + 2)
            delimiter = text[i + 2:open_paren]
            end = text.find(")" + delimiter + '"', open_paren)
            end = n if end < 0 else end + len(delimiter) + 2
            blank(i, end)
            i = end
        elif c == '"' or (c == "'" and not (i > 0 and text[i - 1].isalnum())):
            end = i + 1
            while end < n and text[end] != c:
                end += 2 if text[end] == "\\" else 1
            blank(i, end + 1)
            i = end + 1
        else:
            i += 1
    return "".join(out)


def matching_brace(code, open_at):
    depth = 0
    for k in range(open_at, len(code)):
        if code[k] == "{":
            depth += 1
        elif code[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    raise ValueError("unbalanced braces")


def without_template_heads(header):
    """The declaration with `template <...>` heads removed."""
    while True:
        m = re.search(r"\btemplate\s*<", header)
        if not m:
            return header
        depth, k = 0, m.end() - 1
        while k < len(header):
            depth += {"<": 1, ">": -1}.get(header[k], 0)
            if depth == 0:
                break
            k += 1
        header = header[: m.start()] + " " + header[k + 1:]


def top_level(header, chars):
    """Whether any of `chars` occurs outside parentheses and angle brackets."""
    depth = 0
    for c in header:
        if c in "(<":
            depth += 1
        elif c in ")>":
            depth -= 1
        elif depth <= 0 and c in chars:
            return True
    return False


def classify(header):
    """What a brace at namespace or class scope opens."""
    h = without_template_heads(header).strip()
    if re.search(r"\bnamespace\b", h) or re.match(r'extern\s*$', h):
        return "scope"
    if re.match(r"(\[\[.*?\]\]\s*)?(typedef\s+)?(class|struct|union)\b", h) and "(" not in h.split(":")[0]:
        return "scope"
    if re.search(r"\benum\b", h) or "(" not in h or top_level(h, "="):
        return "other"
    return "function"


def in_member_initializers(header):
    """A constructor's `: a_(x), b_{y}`: the brace after a member's name."""
    h = header.rstrip()
    close = h.rfind(")")
    if close < 0 or not re.search(r"[A-Za-z_0-9>]$", h):
        return False
    after = h[close + 1:]
    if re.search(r"(?<!:):(?!:)", after) is None and not re.search(r"\)\s*:(?!:)", h):
        return False
    last_word = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\s*$", h)
    return not (last_word and last_word.group(1) in {"const", "noexcept", "override", "final", "mutable"})


def function_name(header):
    h = without_template_heads(header)
    depth, k = 0, 0
    for k, c in enumerate(h):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth <= 0:
            break
    m = re.search(r"([~A-Za-z_0-9:]+(?:\s*operator\s*[^\s(]+|\s*operator\(\))?)\s*$", h[:k])
    return m.group(1).strip() if m else "?"


def functions(code):
    """(name, first line, last line) of every function body in `code`."""
    found = []

    def scan(start, end):
        header_from = start
        k = start
        while k < end:
            c = code[k]
            if c in ";}":
                header_from = k + 1
            elif c == "{":
                header = code[header_from:k]
                close = matching_brace(code, k)
                kind = classify(header)
                if kind == "function" and in_member_initializers(header):
                    k = close + 1
                    continue
                if kind == "scope":
                    scan(k + 1, close)
                elif kind == "function":
                    first = header_from + (len(header) - len(header.lstrip()))
                    found.append(
                        (function_name(header), code.count("\n", 0, first) + 1, code.count("\n", 0, close) + 1))
                header_from = close + 1
                k = close
            k += 1

    scan(0, len(code))
    return found


def production_sources(root):
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIPPED_DIRS and not d.startswith(("build", ".")))
        for name in sorted(files):
            if name.endswith((".cpp", ".hpp")) and not name.endswith("_test.cpp"):
                yield os.path.join(directory, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    offenders, checked = 0, 0
    for path in args.paths:
        files = production_sources(path) if os.path.isdir(path) else [path]
        for name in files:
            with open(name, encoding="utf-8") as f:
                code = blank_out(f.read())
            try:
                found = functions(code)
            except ValueError as e:
                print(f"{name}: {e}", file=sys.stderr)
                return 2
            for function, first, last in found:
                checked += 1
                length = last - first + 1
                if length > args.limit:
                    offenders += 1
                    print(f"{name}:{first}: {function} is {length} lines, over the limit of {args.limit}")
    if offenders:
        return 1
    print(f"every one of {checked} functions is at most {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
