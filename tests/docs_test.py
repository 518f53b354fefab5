#!/usr/bin/env python3
"""The documentation stays navigable, and the repository holds the product, not lab notes.

Limits (each a failure past it):
- README.md: at most 220 lines, with a link to docs/ARCHITECTURE.md in its first 40;
- docs/BENCHMARKS.md: at most 300 lines;
- docs/*.md together: at most 1,500 lines;
- docs/results/: at most 30 files (counted in every folder below it);
- bench/: no file or folder named after an issue or a device call (issue[0-9], call[0-9]).

Every relative link in README.md and docs/*.md names a file or folder that exists inside the
repository, and its #anchor, where it has one into a Markdown file, a heading there (GitHub's
rule: lower case, punctuation dropped, spaces to hyphens, -1, -2 on repeats); no document names
DESIGN.md or STYLE.md (notes outside the repository) or a path outside the repository
(../shared, /work/...).

Docs state facts: outside generated blocks, README.md and docs/*.md hold no date (YYYY-MM-DD), no
commit hash (7-40 hex digits with a letter and a digit) and no "X -> Y s" timing; a generated block
(`<!-- generated: COMMAND -->` ... `<!-- end generated -->`) holds, byte for byte, what COMMAND
prints when run from the repository's root with the suite's binary first on PATH (RSB_BINARY names
it; else build/reduce-scan-bench); a command that fails or is missing is a failure with its
message. Every file in docs/results is named by a document (or a folder of it is), and none is
named by a date, an issue or a session. Comments in code and scripts (common/ src/ kernels/
scripts/ bench/ tests/ .ci/ CMakeLists.txt) hold no date and no "X -> Y s" timing: they state
what holds now, and measurements are result files.

Usage: docs_test.py [REPO_ROOT]   (default: the folder above this script). Exit 0 or 1, each
problem on a line of its own: FILE:LINE: what is wrong.
"""
import os
import re
import shutil
import subprocess
import sys

MAX_README_LINES = 220
FIRST_SCREEN = 40
MAX_BENCHMARKS_LINES = 300
MAX_DOCS_LINES = 1500
MAX_RESULT_FILES = 30
LAB_NAME = re.compile(r"(issue|call)[0-9]", re.IGNORECASE)

LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
PARENT_PATH = re.compile(r"(?<![\w.~/-])((?:\.\./)+[\w.\-/]*)")
OUTSIDE_MARKERS = (re.compile(r"(?<![\w.-])/work/"), re.compile(r"\.\./shared\b"))
PRIVATE_NOTES = re.compile(r"\b(DESIGN|STYLE)\.md\b")

DATE = re.compile(r"(?<![\w-])(19|20)\d\d-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?![\d])")
HEX = re.compile(r"(?<![\w./+-])[0-9a-f]{7,40}(?![\w+-])")
TIMING = re.compile(r"\d+(?:\.\d+)?\s*(?:s|ms|min|CPU-s)?\s*(?:->|\u2192)\s*\d+(?:\.\d+)?\s*"
                    r"(?:CPU-seconds|CPU-s|ms|min|s)\b")
BLOCK_START = re.compile(r"^<!-- generated: (.+?) -->$")
BLOCK_END = "<!-- end generated -->"
RESULT_LAB_NAME = re.compile(r"(19|20)\d\d-\d\d-\d\d|issue[0-9]|session[0-9]|call[0-9]",
                             re.IGNORECASE)
CODE_PLACES = ("common", "src", "kernels", "scripts", "bench", "tests", ".ci", "CMakeLists.txt")
C_LIKE = (".c", ".cc", ".cpp", ".h", ".hpp", ".cl", ".clh", ".cu", ".cuh")


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


def commit_hashes(line):
    """The words of 7-40 lower-case hex digits with a letter and a digit: commit hashes."""
    return [m.group(0) for m in HEX.finditer(line)
            if re.search(r"[a-f]", m.group(0)) and re.search(r"[0-9]", m.group(0))]


def generated_blocks(rel, lines, problems):
    """[(command, first line, body lines)] of the generated blocks; an unclosed one is a problem."""
    blocks, at = [], None
    for number, line in enumerate(lines, 1):
        m = BLOCK_START.match(line.strip())
        if m and at is None:
            at = (m.group(1), number, [])
        elif line.strip() == BLOCK_END and at is not None:
            blocks.append(at)
            at = None
        elif line.strip() == BLOCK_END or m:
            problems.append(f"{rel}:{number}: a generated block's marker out of place")
        elif at is not None:
            at[2].append(line)
    if at is not None:
        problems.append(f"{rel}:{at[1]}: generated block not closed by '{BLOCK_END}'")
    return blocks


def check_facts(root, doc, lines, problems):
    """Outside generated blocks: no date, no commit hash, no "X -> Y s" timing."""
    rel = os.path.relpath(doc, root)
    inside_block = False
    for number, line in enumerate(lines, 1):
        if BLOCK_START.match(line.strip()):
            inside_block = True
        elif line.strip() == BLOCK_END:
            inside_block = False
        if inside_block:
            continue
        for m in DATE.finditer(line):
            problems.append(f"{rel}:{number}: a date ('{m.group(0)}'): state the fact; a "
                            "measurement is a result file in docs/results and a generated table")
        for h in commit_hashes(line):
            problems.append(f"{rel}:{number}: a commit hash ('{h}'): state the fact, not its history")
        for m in TIMING.finditer(line):
            problems.append(f"{rel}:{number}: a before/after timing ('{m.group(0)}'): state what "
                            "holds now")


def binary_dir(root):
    """The folder of the suite's binary: RSB_BINARY's, else build/'s, else None."""
    binary = os.environ.get("RSB_BINARY") or os.path.join(root, "build", "reduce-scan-bench")
    return os.path.dirname(os.path.abspath(binary)) if os.access(binary, os.X_OK) else None


def check_generated(root, doc, lines, problems):
    """Each generated block holds what its command prints now, byte for byte."""
    rel = os.path.relpath(doc, root)
    folder = binary_dir(root)
    env = dict(os.environ)
    if folder:
        env["PATH"] = folder + os.pathsep + env.get("PATH", "")
    for command, number, body in generated_blocks(rel, lines, problems):
        word = command.split()[0]
        if not shutil.which(word, path=env["PATH"]) and not os.access(os.path.join(root, word),
                                                                    os.X_OK):
            hint = " (set RSB_BINARY or build build/reduce-scan-bench)" \
                if word == "reduce-scan-bench" else ""
            problems.append(f"{rel}:{number}: generated block: '{word}' not found{hint}")
            continue
        try:
            run = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True,
                                 text=True, timeout=60)
        except subprocess.TimeoutExpired:
            problems.append(f"{rel}:{number}: generated block: '{command}' ran past 60 s")
            continue
        if run.returncode != 0:
            said = (run.stderr.strip().splitlines() or [""])[-1]
            problems.append(f"{rel}:{number}: generated block: '{command}' exited "
                            f"{run.returncode}: {said}")
            continue
        made = run.stdout.splitlines()
        if made != body:
            first = next((i for i, (a, b) in enumerate(zip(made, body)) if a != b),
                         min(len(made), len(body)))
            problems.append(f"{rel}:{number + 1 + first}: generated block differs from what "
                            f"'{command}' prints now ({len(body)} lines against {len(made)}; "
                            "run it and paste its output)")


def check_result_files(root, texts, problems):
    """Every file in docs/results named by a document (or a folder of it), none by a date."""
    results = os.path.join(root, "docs", "results")
    named = "\n".join(texts)
    for d, _, names in os.walk(results):
        for name in names:
            rel = os.path.relpath(os.path.join(d, name), os.path.join(root, "docs"))
            m = RESULT_LAB_NAME.search(rel)
            if m:
                problems.append(f"docs/{rel}: named by '{m.group(0)}': name a result file by what "
                                "it holds")
            parts = rel.split(os.sep)
            used = any("/".join(parts[1:k]) in named for k in range(2, len(parts) + 1))
            if not used:
                problems.append(f"docs/{rel}: no document names it: delete it (git history "
                                "keeps it) or cite it")


def comment_text(path, line, in_block):
    """The comment part of a line of code or script, and whether a /* block stays open."""
    if path.endswith(C_LIKE):
        text = ""
        if in_block:
            end = line.find("*/")
            if end < 0:
                return line, True
            text, line = line[:end], line[end + 2:]
        at = re.search(r"(?<!:)//|/\*", line)
        if not at:
            return text, False
        if at.group(0) == "//":
            return text + line[at.end():], False
        rest = line[at.end():]
        end = rest.find("*/")
        return (text + rest, True) if end < 0 else (text + rest[:end], False)
    at = re.search(r"(^|\s)#", line)
    return (line[at.end():] if at else ""), False


def code_files(root):
    for place in CODE_PLACES:
        top = os.path.join(root, place)
        if os.path.isfile(top):
            yield top
            continue
        for d, dirs, names in os.walk(top):
            dirs[:] = [x for x in dirs if x not in ("fixtures", "__pycache__")]
            for name in sorted(names):
                yield os.path.join(d, name)


def check_code_comments(root, problems):
    """No date and no "X -> Y s" timing in a comment of code or scripts."""
    for path in code_files(root):
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue  # a binary or unreadable file has no comments to read
        rel = os.path.relpath(path, root)
        texts, in_block = [], False
        for line in lines:
            text, in_block = comment_text(path, line, in_block)
            texts.append(text)
        for number, text in enumerate(texts, 1):
            m = DATE.search(text)
            if m:
                problems.append(f"{rel}:{number}: a date in a comment ('{m.group(0)}'): say what "
                                "holds now; a measurement is a result file")
            # A timing may run on into the next line's comment ("318 -> 309" / "CPU-s").
            joined = text + " " + (texts[number] if number < len(texts) else "")
            m = TIMING.search(joined)
            if m and m.start() < len(text):
                problems.append(f"{rel}:{number}: a before/after timing in a comment "
                                f"('{m.group(0)}'): say what holds now; a measurement is a "
                                "result file")


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
    texts = []
    for doc in docs:
        with open(doc, encoding="utf-8") as f:
            lines = f.read().splitlines()
        texts.append("\n".join(lines))
        check_links(root, doc, lines, problems)
        check_text(root, doc, lines, problems)
        check_facts(root, doc, lines, problems)
        check_generated(root, doc, lines, problems)
    check_result_files(root, texts, problems)
    check_code_comments(root, problems)
    for problem in problems:
        print(problem)
    if problems:
        print(f"docs_test: {len(problems)} problem(s) in {len(docs)} documents")
        return 1
    print(f"docs_test: {len(docs)} documents, README.md within {MAX_README_LINES} lines, "
          f"docs/BENCHMARKS.md within {MAX_BENCHMARKS_LINES}, docs/*.md within {MAX_DOCS_LINES}, "
          f"docs/results within {MAX_RESULT_FILES} files, each cited and named by what it holds, no "
          "lab names in bench/, every relative link resolves inside the repository, no date, "
          "commit hash or before/after timing outside generated blocks or in code comments, "
          "every generated block as its command prints it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
