#!/usr/bin/env python3
"""Function length: no function in common/ or src/ over 60 lines, but the plain field lists
that docs/ARCHITECTURE.md names.

  python3 tests/function_length_test.py [SOURCE_DIR]

A function is a brace block opened at namespace or class level after a parameter list (a
heuristic reader: comments and string literals are blanked first, so braces in them do not
count); its length runs from the line that opens it to the line that closes it. The exceptions
are the lines of docs/ARCHITECTURE.md's section "Long functions" of the form
  - `path/File.cpp`: `Name`, `Other` (why)
Exit 1 with one line per function over the limit that is not listed, and per listed one that is
no longer long (so the list stays true).
"""
import os
import re
import sys

LIMIT = 60


def blank(text):
    """The text with comments, string and character literals emptied, newlines kept."""
    keep = lambda m: "\n" * m.group(0).count("\n")
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + keep(m), text, flags=re.S)
    text = re.sub(r"/\*.*?\*/", keep, text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\\n])*'", "''", text)


def functions(path):
    """(name, first line, number of lines) of every function defined in the file."""
    lines = blank(open(path, encoding="utf-8").read()).split("\n")
    found, stack = [], []  # stack entries: (kind, line, name)
    for i, line in enumerate(lines):
        for col, ch in enumerate(line):
            if ch == "{":
                before = " ".join(lines[max(0, i - 6):i] + [line[:col]])
                head = line[:col].strip()
                kind, name = "block", ""
                if re.match(r"^(namespace\b|extern\b)", head) or re.search(r"\bnamespace\s*\w*\s*$", before):
                    kind = "namespace"
                elif re.search(r"\b(class|struct|union|enum)\b[^();{}]*$", before):
                    kind = "class"
                elif all(k in ("namespace", "class") for k, _, _ in stack):
                    m = re.search(r"([~\w:]+|operator\S+)\s*\([^;{}]*\)[^;{}()]*$", before)
                    if m and m.group(1) not in ("if", "for", "while", "switch", "catch"):
                        kind, name = "function", m.group(1).split("::")[-1]
                stack.append((kind, i, name))
            elif ch == "}" and stack:
                kind, start, name = stack.pop()
                if kind == "function":
                    found.append((name, start + 1, i - start + 1))
    return found


def allowed(root):
    """{(path, name): why} from docs/ARCHITECTURE.md's "Long functions" section."""
    doc = open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8").read()
    m = re.search(r"^## Long functions\n(.*?)(?=^## |\Z)", doc, flags=re.S | re.M)
    out = {}
    for line in (m.group(1) if m else "").split("\n"):
        entry = re.match(r"- `([^`]+)`: (.*)", line)
        if entry:
            for name in re.findall(r"`([^`]+)`", entry.group(2)):
                out[(entry.group(1), name)] = line
    return out


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), ".."))
    listed = allowed(root)
    seen, problems = set(), []
    for top in ("common", "src"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for file in sorted(names):
                if not file.endswith((".cpp", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, file), root)
                for name, line, length in functions(os.path.join(root, path)):
                    if length <= LIMIT:
                        continue
                    if (path, name) in listed:
                        seen.add((path, name))
                        continue
                    problems.append(f"{path}:{line}: {name} is {length} lines (at most {LIMIT}; "
                                    f"a plain field list may be named in docs/ARCHITECTURE.md, "
                                    f"\"Long functions\")")
    for path, name in sorted(set(listed) - seen):
        problems.append(f"docs/ARCHITECTURE.md names {path}: {name} as a long function, and it "
                        f"is not one (any more): take it off the list")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"every function in common/ and src/ is at most {LIMIT} lines, but the {len(seen)} "
          f"field lists docs/ARCHITECTURE.md names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
