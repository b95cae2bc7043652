#!/usr/bin/env python3
"""README.md stays a short entry page, and no link between the docs is broken.

Fails when README.md reaches 300 lines, or when a relative link in README.md
or docs/*.md names a file that does not exist or a #anchor that no heading of
the target file produces (GitHub's heading slugs). Usage: docs_links_test.py
[SOURCE_DIR]; prints one `file:line: message` per problem, exit 1 if any.
"""
import pathlib
import re
import sys

README_MAX_LINES = 299  # "strictly under 300": the README is the newcomer's page
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def anchors(path, cache={}):
    if path not in cache:
        seen, found = {}, set()
        for _, line in prose_lines(path):
            match = HEADING.match(line)
            if not match:
                continue
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def check(root):
    problems = []
    readme = root / "README.md"
    lines = len(readme.read_text(encoding="utf-8").splitlines())
    if lines > README_MAX_LINES:
        problems.append(f"{readme}:{lines}: README.md has {lines} lines; keep it under 300 and move detail to docs/")
    pages = [readme] + sorted((root / "docs").glob("*.md"))
    for page in pages:
        for number, line in prose_lines(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto:, ...
                    continue
                file_part, _, anchor = target.partition("#")
                linked = (page.parent / file_part).resolve() if file_part else page
                if not linked.exists():
                    problems.append(f"{page}:{number}: link to missing file {file_part}")
                    continue
                if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                    problems.append(f"{page}:{number}: link to missing anchor #{anchor} in {linked.name}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    problems = check(root.resolve())
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
