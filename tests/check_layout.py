"""Checks server/internal.h's file map against the code: every .c file of
server/ is in it, each file's arrows are exactly the other files whose
functions it uses, and no file reaches itself through them (no call
circle). Usage: check_layout.py SRCDIR. Prints one line per problem, exits
1 when there is any."""
import os
import re
import sys

top = sys.argv[1]
srv = os.path.join(top, "server")
MAP_HEADER = os.path.join(srv, "internal.h")


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    return re.sub(r"//[^\n]*", " ", text)


def file_map(text):
    """{file stem: set of stems its arrows name}, from the map's block."""
    start = text.index("Every server/ file")
    end = text.index("Calls go only", start)
    entries, cur = {}, None
    for line in text[start:end].splitlines()[1:]:
        m = re.match(r"\s{8}(\w+)\.c\s", line)
        if m:
            cur = m.group(1)
            entries[cur] = ""
        if cur and "→" in line:
            entries[cur] += " " + line.split("→", 1)[1]
        elif cur and entries[cur] and not m:
            entries[cur] += " " + line          # the arrows' list wraps
    return {k: {re.sub(r"\.c$", "", w) for w in re.split(r"[,\s]+", v) if w} for k, v in entries.items()}


sources = sorted(f[:-2] for f in os.listdir(srv) if f.endswith(".c"))
declared = file_map(read(MAP_HEADER))
problems = []
for f in sources:
    if f not in declared:
        problems.append(f"server/{f}.c is missing from the file map in server/internal.h")
for f in declared:
    if f not in sources:
        problems.append(f"the file map names {f}.c, which server/ does not have")

code = {f: strip_comments(read(os.path.join(srv, f + ".c"))) for f in sources}
defined = {}
for f, text in code.items():
    for name in re.findall(r"^((?:fasgd_srv|fasgd_server)_\w+) \(", text, flags=re.M):
        defined[name] = f
uses = {f: set() for f in sources}
for f, text in code.items():
    for name in set(re.findall(r"\b(?:fasgd_srv|fasgd_server)_\w+\b", text)):
        g = defined.get(name)
        if g and g != f:
            uses[f].add(g)
for f in sources:
    arrows = declared.get(f, set())
    for g in sorted(uses[f] - arrows):
        problems.append(f"{f}.c calls into {g}.c, but the file map has no arrow {f} → {g}")
    for g in sorted(arrows - uses[f]):
        problems.append(f"the file map's arrow {f} → {g} is not in the code")


def circle(graph):
    state = {}

    def visit(n, path):
        state[n] = 1
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path + [n, m]
            if m not in state:
                found = visit(m, path + [n])
                if found:
                    return found
        state[n] = 2
        return None
    for n in sorted(graph):
        if n not in state:
            found = visit(n, [])
            if found:
                return found
    return None


found = circle(uses)
if found:
    problems.append("call circle: " + " → ".join(found[found.index(found[-1]):]))
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
