#!/usr/bin/env python3
"""The documentation stays navigable, and the repository holds the product, not lab notes.

Limits (each a failure past it):
- README.md: at most 220 lines, with a link to docs/ARCHITECTURE.md in its first 40;
- docs/BENCHMARKS.md: at most 300 lines;
- docs/*.md together: at most 1,800 lines;
- docs/results/: at most 30 files (counted in every folder below it);
- bench/: no file or folder named after an issue or a device call (issue[0-9], call[0-9]).

Every relative link in README.md and docs/*.md names a file or folder that exists inside the
repository, and its #anchor, where it has one into a Markdown file, a heading there (GitHub's
rule: lower case, punctuation dropped, spaces to hyphens, -1, -2 on repeats); no document names
DESIGN.md or STYLE.md (notes outside the repository) or a path outside the repository
(../shared, /work/...).

Usage: docs_test.py [REPO_ROOT]   (default: the folder above this script). Exit 0 or 1, each
problem on a line of its own: FILE:LINE: what is wrong.
"""
import os
import re
import sys

MAX_README_LINES = 220
FIRST_SCREEN = 40
MAX_BENCHMARKS_LINES = 300
MAX_DOCS_LINES = 1800
MAX_RESULT_FILES = 30
LAB_NAME = re.compile(r"(issue|call)[0-9]", re.IGNORECASE)

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
PARENT_PATH = re.compile(r"(?<![\w.~/-])((?:\.\./)+[\w.\-/]*)")
OUTSIDE_MARKERS = (re.compile(r"(?<![\w.-])/work/"), re.compile(r"\.\./shared\b"))
PRIVATE_NOTES = re.compile(r"\b(DESIGN|STYLE)\.md\b")


def documents(root):
    docs = [os.path.join(root, "README.md")]
    folder = os.path.join(root, "docs")
    docs += sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".md"))
    return docs


def anchors(path):
    """The anchors GitHub makes of a Markdown file's headings (outside code blocks)."""
    found, seen, in_code = set(), {}, False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            m = None if in_code else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                slug = re.sub(r"[^\w\- ]", "", m.group(1).lower()).replace(" ", "-")
                count = seen.get(slug, 0)
                seen[slug] = count + 1
                found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def inside(root, path):
    root = os.path.realpath(root)
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def check_links(root, doc, lines, problems):
    """Every relative link outside code blocks names an existing path inside the repository."""
    rel = os.path.relpath(doc, root)
    in_code = False
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in LINK.findall(line):
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path)) if path else doc
            if not inside(root, resolved):
                problems.append(f"{rel}:{number}: link '{target}' points outside the repository")
            elif not os.path.exists(resolved):
                problems.append(f"{rel}:{number}: link '{target}': no such file or folder")
            elif anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                problems.append(f"{rel}:{number}: link '{target}': no heading '#{anchor}' in "
                                f"{os.path.relpath(resolved, root)}")


def check_text(root, doc, lines, problems):
    """No private notes, no path outside the repository, in text and code blocks alike."""
    rel = os.path.relpath(doc, root)
    for number, line in enumerate(lines, 1):
        m = PRIVATE_NOTES.search(line)
        if m:
            problems.append(f"{rel}:{number}: refers to {m.group(0)}, which is not in the repository")
        for marker in OUTSIDE_MARKERS:
            for m in marker.finditer(line):
                path = re.match(r"[^\s)\]`'\"]+", line[m.start():]).group(0)
                problems.append(f"{rel}:{number}: a path outside the repository: '{path}'")
        for path in PARENT_PATH.findall(line):
            resolved = os.path.normpath(os.path.join(os.path.dirname(doc), path))
            if not inside(root, resolved):
                problems.append(f"{rel}:{number}: a path outside the repository: '{path}'")


def check_readme(root, problems):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    if len(lines) > MAX_README_LINES:
        problems.append(f"README.md: {len(lines)} lines, more than {MAX_README_LINES}: move the "
                        "detail to docs/USAGE.md, docs/COURSE.md or docs/OUTPUT.md")
    if not any(re.search(r"\]\(\s*(\./)?docs/ARCHITECTURE\.md", line)
               for line in lines[:FIRST_SCREEN]):
        problems.append(f"README.md: no link to docs/ARCHITECTURE.md in its first {FIRST_SCREEN} "
                        "lines")


def line_count(path):
    with open(path, encoding="utf-8") as f:
        return len(f.read().splitlines())


def check_limits(root, problems):
    """The sizes that keep the documentation and the results short, and bench/ free of lab names."""
    benchmarks = os.path.join(root, "docs", "BENCHMARKS.md")
    if os.path.exists(benchmarks) and line_count(benchmarks) > MAX_BENCHMARKS_LINES:
        problems.append(f"docs/BENCHMARKS.md: {line_count(benchmarks)} lines, more than "
                        f"{MAX_BENCHMARKS_LINES}: the current figures and why each pays, no archive")
    folder = os.path.join(root, "docs")
    counts = {f: line_count(os.path.join(folder, f)) for f in sorted(os.listdir(folder))
              if f.endswith(".md")}
    if sum(counts.values()) > MAX_DOCS_LINES:
        each = ", ".join(f"{f} {n}" for f, n in counts.items())
        problems.append(f"docs/*.md: {sum(counts.values())} lines together, more than "
                        f"{MAX_DOCS_LINES} ({each})")
    results = os.path.join(root, "docs", "results")
    files = [os.path.relpath(os.path.join(d, f), root)
             for d, _, names in os.walk(results) for f in names]
    if len(files) > MAX_RESULT_FILES:
        problems.append(f"docs/results: {len(files)} files, more than {MAX_RESULT_FILES}: keep only "
                        "those the current figures cite (git history keeps the rest)")
    for d, dirs, names in os.walk(os.path.join(root, "bench")):
        for name in dirs + names:
            if LAB_NAME.search(name):
                rel = os.path.relpath(os.path.join(d, name), root)
                problems.append(f"{rel}: named after an issue or a device call; bench/ holds "
                                "reference programs and reusable scripts")


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    problems = []
    check_readme(root, problems)
    check_limits(root, problems)
    docs = documents(root)
    for doc in docs:
        with open(doc, encoding="utf-8") as f:
            lines = f.read().splitlines()
        check_links(root, doc, lines, problems)
        check_text(root, doc, lines, problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs_test: {len(problems)} problem(s) in {len(docs)} documents")
        return 1
    print(f"docs_test: {len(docs)} documents, README.md within {MAX_README_LINES} lines, "
          f"docs/BENCHMARKS.md within {MAX_BENCHMARKS_LINES}, docs/*.md within {MAX_DOCS_LINES}, "
          f"docs/results within {MAX_RESULT_FILES} files, no lab names in bench/, every relative "
          "link resolves inside the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
