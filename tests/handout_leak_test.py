#!/usr/bin/env python3
"""The hand-out gives no solution away (issue 44).

   tests/handout_leak_test.py SOURCE_DIR [HANDOUT_DIR]

Takes every line of every solution region (between `// SOLUTION BEGIN` and `// SOLUTION END` in
the course files under kernels/ and src/), drops the trivial ones (blank, braces, a lone
`barrier(...);`, and lines that a line of the hand-out's kernels/, src/ and common/ holds: code a
student is given anyway, such as `if (get_local_id(0) == 0)`), less their trailing comments, and
normalises whitespace (runs of blanks to one, none around punctuation). Then every line of every
text file of the hand-out, normalised the same way, must hold none of them: each one found fails,
naming the hand-out's file and line and the solution's file and line.

The docs (README.md, docs/*.md) quote no solution line even in part: no line of theirs nearly
quotes one (an example that is a solution line less a piece, `dst[i] = OP(src[i], src[i + h]);`
for `dst[i] = i + h < m ? OP(a, src[i + h]) : a;`): most of the line's tokens are the solution
line's, in its order, and they make most of it (NEAR).

Without HANDOUT_DIR it writes the real hand-out with scripts/make-handout. Then, so that the scan
cannot pass by seeing nothing, it plants one solution line in a copy of a hand-out file (a test
source, as a quoting test would) and expects exactly that file and line to be named; and one
solution line less a token in a doc.
"""
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

BEGIN = re.compile(r"^\s*// SOLUTION BEGIN\s*$")
END = re.compile(r"^\s*// SOLUTION END\s*$")
SOURCES = (".cl", ".clh", ".cpp", ".h", ".hpp", ".cc", ".cu")
TRIVIAL = re.compile(r"^([{}();]*|barrier\([^()]*\);|\}?else\{?|return;|break;|continue;)$")


def normalise(line):
    """Whitespace-insensitive form: no blanks next to punctuation, other runs to one blank."""
    s = re.sub(r"\s+", " ", line.strip())
    return re.sub(r" ?([^\w ]) ?", r"\1", s)


STRING = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'|`([^`]+)`')
COMMENT = re.compile(r"^(//!?|#|\*|/\*)\s*")


def fragments(line):
    """The normalised pieces of a hand-out line that could quote code, each with whether it is a
    quoted piece: the line itself, and each string literal's (split at its \\n) or inline code
    span's text, comment leaders dropped."""
    out = {normalise(COMMENT.sub("", line.strip())): False}
    for m in STRING.finditer(line):
        for p in (m.group(1) or m.group(2) or m.group(3) or "").split("\\n"):
            n = normalise(COMMENT.sub("", p.strip()))
            out[n] = out.get(n, True)
    out.pop("", None)
    return out


def quotes(frag, quoted, sol):
    """frag is sol, holds a long sol, or is a quoted long piece of sol (a literal split over
    lines)."""
    return (frag == sol or (len(sol) >= 16 and sol in frag)
            or (quoted and len(frag) >= 24 and frag in sol))


def course_files(root):
    for top in ("kernels", "src"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith(SOURCES):
                    yield os.path.relpath(os.path.join(d, n), root)


def solution_lines(src, handout):
    """{normalised line: 'file:line'} of the solution regions, less the trivial and the given."""
    found, given = {}, set()
    for rel in course_files(src):
        with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
            lines = f.read().split("\n")
        inside = False
        for i, line in enumerate(lines, 1):
            if BEGIN.match(line):
                inside = True
            elif END.match(line):
                inside = False
            elif inside:
                n = normalise(line.split("//")[0])
                if n and not TRIVIAL.match(n):
                    found.setdefault(n, f"{rel}:{i}")
    for top in ("kernels", "src", "common"):
        for d, _, names in os.walk(os.path.join(handout, top)):
            for n in names:
                with open(os.path.join(d, n), encoding="utf-8", errors="replace") as f:
                    given.update(normalise(x) for x in f)
    given_text = "\n".join(given)
    return {n: where for n, where in found.items() if n not in given_text}


class Finder:
    """Which lines may quote a solution line, decided without trying each solution line on each
    fragment (the hand-out took 12 CPU-s so, 2 with this): a fragment can only be a solution line
    (a set), hold a long one (then it holds that line's first 16 characters: a set of them), or
    be a quoted long piece of one (a search in all of them at once). A line that passes this
    test is then tried line by line, as `quotes` says."""

    def __init__(self, solution):
        self.lines = set(solution)
        self.heads = {s[:16] for s in solution if len(s) >= 16}
        self.joined = "\0".join(solution)

    def may_quote(self, frag, quoted):
        if frag in self.lines:
            return True
        if any(frag[i:i + 16] in self.heads for i in range(len(frag) - 15)):
            return True
        return quoted and len(frag) >= 24 and frag in self.joined


def scan(handout, solution):
    """'file:line holds solution line ... (from file:line)' for every leak in the hand-out."""
    leaks = []
    finder = Finder(solution)
    for d, dirs, names in os.walk(handout):
        dirs[:] = sorted(x for x in dirs if x != ".git")
        for name in sorted(names):
            path = os.path.join(d, name)
            rel = os.path.relpath(path, handout)
            try:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # not text: no line to quote
            for i, line in enumerate(text.split("\n"), 1):
                frags = fragments(line)
                if not any(finder.may_quote(f, q) for f, q in frags.items()):
                    continue
                for sol, where in solution.items():
                    if any(quotes(f, q, sol) for f, q in frags.items()):
                        leaks.append(f"{rel}:{i} holds the solution line '{sol}' ({where})")
    return leaks


TOKEN = re.compile(r"\w+|[^\w\s]")
# A docs line nearly quotes a solution line where their longest common token subsequence is at
# least NEAR[0] of the docs line's tokens and NEAR[1] of the solution line's, both of at least
# NEAR_TOKENS tokens (`a = b;` quotes nothing).
NEAR, NEAR_TOKENS = (0.75, 0.6), 8


def common_tokens(a, b):
    """The length of the longest common subsequence of two token lists."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def near_quotes(root, solution):
    """'file:line nearly quotes ...' for every line of README.md and docs/*.md of root whose code
    (before a `//` comment) nearly quotes a solution line (NEAR)."""
    sols = []
    for sol, where in solution.items():
        tokens = TOKEN.findall(sol)
        if len(tokens) >= NEAR_TOKENS:
            sols.append((tokens, collections.Counter(tokens), sol, where))
    docs = ["README.md"] + [os.path.join("docs", f) for f in sorted(os.listdir(
        os.path.join(root, "docs"))) if f.endswith(".md")]
    found = []
    for rel in docs:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for i, line in enumerate(lines, 1):
            tokens = TOKEN.findall(line.split("//")[0])
            if len(tokens) < NEAR_TOKENS:
                continue
            counts = collections.Counter(tokens)
            for sol_tokens, sol_counts, sol, where in sols:
                # (the tokens both hold bound the common subsequence: most pairs stop here)
                bound = sum((counts & sol_counts).values())
                if bound < NEAR[0] * len(tokens) or bound < NEAR[1] * len(sol_tokens):
                    continue
                n = common_tokens(tokens, sol_tokens)
                if n >= NEAR[0] * len(tokens) and n >= NEAR[1] * len(sol_tokens):
                    found.append(f"{rel}:{i} nearly quotes the solution line '{sol}' ({where}): "
                                 f"{line.strip()}")
    return found


def planted_near_quote(tmp, solution):
    """A doc with a solution line less one token is named; True where it is."""
    line, where = max(solution.items(), key=lambda kv: len(TOKEN.findall(kv[0])))
    tokens = TOKEN.findall(line)
    planted = os.path.join(tmp, "planted-docs")
    os.makedirs(os.path.join(planted, "docs"))
    with open(os.path.join(planted, "README.md"), "w") as f:
        f.write("# a page\n\n```\n  " + " ".join(tokens[:-2] + tokens[-1:]) +
                "   // (an example)\n```\n")
    got = near_quotes(planted, solution)
    if not any(g.startswith("README.md:4 ") for g in got):
        print(f"FAIL: a planted near quote of a solution line ({where}) was not found: {got}")
        return False
    return True


def main():
    src = os.path.realpath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="rsb-leak.")
    try:
        handout = sys.argv[2] if len(sys.argv) > 2 else os.path.join(tmp, "handout")
        if len(sys.argv) <= 2:
            made = subprocess.run([sys.executable, os.path.join(src, "scripts", "make-handout"),
                                   handout], capture_output=True, text=True)
            if made.returncode != 0:
                print(f"FAIL: make-handout -> {made.returncode}: {made.stderr.strip()}")
                return 1
        solution = solution_lines(src, handout)
        if len(solution) < 20:
            print(f"FAIL: only {len(solution)} solution lines found in {src} (markers gone?)")
            return 1
        leaks = scan(handout, solution) + near_quotes(handout, solution)
        for leak in leaks:
            print(f"FAIL: the hand-out's {leak}")
        if not planted_near_quote(tmp, solution):
            return 1
        # The scan sees a planted quote: one solution line in a test source's string literal.
        line, where = sorted(solution.items())[len(solution) // 2]
        planted = os.path.join(tmp, "planted")
        os.makedirs(os.path.join(planted, "tests"))
        with open(os.path.join(planted, "tests", "Quote.cpp"), "w") as f:
            f.write(f'// a test\nconst char* k =\n    "  {line}\\n";\n')
        got = scan(planted, solution)
        if not any(g.startswith("tests/Quote.cpp:3 ") for g in got):
            print(f"FAIL: a planted solution line ({where}) was not found: {got}")
            return 1
        print(f"{len(solution)} solution lines, none in the hand-out's files" if not leaks else
              f"{len(leaks)} solution lines in the hand-out")
        return 1 if leaks else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
