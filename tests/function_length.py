#!/usr/bin/env python3
"""Functions longer than 80 lines and files longer than 600 lines in the library folders.

A function is a brace block at namespace or class level whose head (the text since the
previous ';', '{' or '}') holds a parameter list: a definition of a function, a constructor,
an operator or a lambda assigned at namespace level. Its length is counted from the line of
its name to the line of its closing brace, as a reader sees it. Comments and string literals
are blanked first, so braces in them do not count.

Usage: function_length.py SOURCE_DIR [--list]
  Exits 1 and prints each offender (file:line name lines) when one is found; --list prints
  every function of 60 lines or more, offending or not.
"""
import os
import re
import sys

LIBRARY_FOLDERS = ["ops", "net", "store", "transport", "primitives", "launcher", "simulator",
                   "backends", "training", "training_sim", "lessons", "exercises", "bench", "gui",
                   "tools", "python"]
MAX_FUNCTION_LINES = 80
MAX_FILE_LINES = 600
# Exempt: none. A file listed here must say why in a comment beside it.
EXEMPT = {}

CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else|try)\s*$")
NOT_FUNCTION = re.compile(r"\b(class|struct|union|enum|namespace)\b[^()]*$")


def blank_comments_and_strings(text):
    """Replaces comments and string/char literals with spaces, keeping newlines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):  # preprocessor line
            j = i
            while True:
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if text[k - 1] != "\\":
                    break
                j = k + 1
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """Yields (name, first_line, last_line) of every function body at namespace/class level."""
    clean = blank_comments_and_strings(text)
    # One entry per open brace: "scope" (a namespace, class, struct, enum or extern block,
    # which may hold functions), ("fn", name, line), or "inner" (anything else).
    stack = []
    head_start = 0
    for i, c in enumerate(clean):
        if c == "{":
            head = clean[head_start:i]
            at_scope = all(entry == "scope" for entry in stack)
            stripped = head.rstrip()
            if at_scope and NOT_FUNCTION.search(head) or at_scope and stripped.endswith('extern'):
                stack.append("scope")
            elif (at_scope and "(" in head and ")" in head and not CONTROL.search(stripped)
                  and not stripped.endswith("=")):
                before = head[:head.find("(")].rstrip()
                words = before.split()
                name = words[-1] if words else "?"
                first = clean.count("\n", 0, head_start + len(before)) + 1
                stack.append(("fn", name, first))
            else:
                stack.append("inner")
            head_start = i + 1
        elif c == "}":
            if stack:
                top = stack.pop()
                if isinstance(top, tuple):
                    yield top[1], top[2], clean.count("\n", 0, i) + 1
            head_start = i + 1
        elif c == ";":
            head_start = i + 1


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    root = sys.argv[1]
    listing = "--list" in sys.argv
    offenders = 0
    for folder in LIBRARY_FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if not name.endswith((".cpp", ".hpp", ".cu", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                lines = text.count("\n")
                if lines > MAX_FILE_LINES and rel not in EXEMPT:
                    print(f"{rel}: file of {lines} lines (at most {MAX_FILE_LINES})")
                    offenders += 1
                for fn, first, last in functions(text):
                    length = last - first + 1
                    too_long = length > MAX_FUNCTION_LINES and rel not in EXEMPT
                    if too_long or (listing and length >= 60):
                        print(f"{rel}:{first}: {fn} {length} lines")
                    offenders += too_long
    if offenders:
        print(f"{offenders} over the limits: functions at most {MAX_FUNCTION_LINES} lines, "
              f"files at most {MAX_FILE_LINES}; split them")
        return 1
    print("function_length: every function and file is within the limits")
    return 0


if __name__ == "__main__":
    sys.exit(main())
