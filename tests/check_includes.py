#!/usr/bin/env python3
"""Every file includes what it uses, of zklock's own names.

A unity build (scripts/build) compiles each batch of sources as one file, so a
source that uses a class without including its header still compiles when an
earlier source of its batch included it; a packager's build, file by file, then
fails. This check finds that without compiling: it indexes the names that
zklock's headers declare (classes, structs, enums, aliases and namespace-scope
functions, each declared in exactly one header), and for every source and
header it requires the header of each such name it uses to be among the files
it includes, directly or through zklock's headers.

    tests/check_includes.py SOURCE_DIR

It also keeps the boundary of the library: the tools (tools/) and the lab
(lab/) include zklock's installed headers (<zklock/...>) and their own, never
the library's internals (src/), and the ops tool (tools/) nothing of the lab's;
and its layers (docs/design.md, "Layers"): a folder of src/ includes only the
folders LAYERS allows it, and the backend-neutral lock layer (src/lock/) not
the C client's <zookeeper.h>.

Exit status 0 when every file includes what it uses and keeps the boundary, 1
otherwise (each finding on a line: FILE: uses NAME, declared in HEADER, without
including it; FILE: includes HEADER, ...).
"""
import os
import re
import sys

ROOTS = ("include", "src", "tools", "lab", "tests", "examples")
EXTENSIONS = (".hpp", ".cpp", ".h", ".in")
# Where a quoted include is looked for, after the including file's own folder.
INCLUDE_DIRS = ("src", "include", "tools/cli", "tools/zklock", "lab", "tests/integration",
                "tests/unit")

# Which folders of src/ each folder's files may include (besides its own).
LAYERS = {
    "fsm": set(),
    "support": set(),
    "lock": {"fsm", "support"},
    "session": {"fsm", "support"},
    "engine": {"fsm", "support", "lock", "session"},
    "recipes": {"fsm", "support", "lock", "session", "engine"},
    "backends": {"fsm", "support", "lock"},
    "testing": {"fsm", "support"},
}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
# At namespace scope: zklock's headers do not indent a namespace's contents,
# and indent a class's members.
TYPE = re.compile(r'^(?:template[ \t]*<[^;{]*>[ \t\n]*)?(?:class|struct|enum(?:[ \t]+class)?)[ \t]+(?:\[\[\w+\]\][ \t]+)?'
                  r'(?:[A-Z_]+_EXPORT[ \t]+|[A-Z_]+_NO_EXPORT[ \t]+)?([A-Za-z_]\w*)[ \t]*(?:final[ \t]*)?(?::[^;{]*)?\{',
                  re.M)
ANY_TYPE = re.compile(r'^\s*(?:class|struct|enum(?:\s+class)?)\s+(?:[A-Z_]+_EXPORT\s+)?([A-Za-z_]\w*)\s*[:{]', re.M)
ANY_ALIAS = re.compile(r'^\s*using\s+([A-Za-z_]\w*)\s*=', re.M)
FORWARD = re.compile(r'^\s*(?:class|struct)\s+([A-Za-z_]\w*)\s*;', re.M)
ALIAS = re.compile(r'^using[ \t]+([A-Za-z_]\w*)[ \t]*=', re.M)
# A function declared at namespace scope: a line that starts in the first
# column with its return type (zklock's headers indent members).
FUNCTION = re.compile(r'^(?:[A-Z_]+_EXPORT[ \t]+)?(?:(?:inline|constexpr|static|\[\[nodiscard\]\])[ \t]+)*'
                      r'(?!return\b|else\b|case\b|delete\b|typedef\b)[A-Za-z_][\w:<>, \t\*&]*?[ \t\*&]'
                      r'([a-z_]\w*)[ \t]*\(', re.M)
TOKEN = re.compile(r'(?<![\w.>:])(?:zklock::(?:\w+::)*)?([A-Za-z_]\w*)\b')
# Names too common to be one header's (they are a word of the language, or
# used as members and locals everywhere).
COMMON = {"main", "operator", "size", "data", "get", "set", "run", "start", "stop", "close", "open", "wait", "on",
          "name", "path", "value", "result", "options", "type", "state", "error", "lock", "unlock", "time_point",
          "clock", "duration", "milliseconds", "seconds", "string", "vector", "map", "optional", "function"}


def strip(text):
    """The text without comments, string and character literals (line count kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    files = []
    for top in ROOTS:
        for d, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(d, f) for f in names if f.endswith(EXTENSIONS)]
    texts = {}
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            texts[f] = fh.read()
    code = {f: strip(t) for f, t in texts.items()}

    def resolve(including, kind, name):
        candidates = []
        if kind == '"':
            candidates.append(os.path.join(os.path.dirname(including), name))
            candidates += [os.path.join(root, d, name) for d in INCLUDE_DIRS]
        elif name.startswith("zklock/"):
            candidates.append(os.path.join(root, "include", name))
        for c in candidates:
            c = os.path.normpath(c)
            if c in texts:
                return c
        return None

    includes = {f: [r for r in (resolve(f, k, n) for k, n in INCLUDE.findall(texts[f])) if r] for f in files}

    closure_cache = {}

    def closure(f):
        if f in closure_cache:
            return closure_cache[f]
        seen, todo = {f}, [f]
        while todo:
            for g in includes[todo.pop()]:
                if g not in seen:
                    seen.add(g)
                    todo.append(g)
        closure_cache[f] = seen
        return seen

    # The names of the library's and the tools' headers (the tests' helper
    # headers name their functions after what tests hold in variables).
    declared = {}  # name -> (headers that declare it, is a function)
    headers = [f for f in files if f.endswith((".hpp", ".h")) and
               os.path.relpath(f, root).split(os.sep)[0] in ("include", "src", "tools", "lab")]
    for h in headers:
        for n in set(TYPE.findall(code[h])) | set(ALIAS.findall(code[h])):
            declared.setdefault(n, [set(), False])[0].add(h)
        # Functions: the public API's (the internal headers' free functions
        # share their names with members and lambdas too often to tell apart).
        if os.path.relpath(h, root).startswith("include" + os.sep):
            for n in set(FUNCTION.findall(code[h])):
                declared.setdefault(n, [set(), True])[0].add(h)
    # A name declared again anywhere (a nested class, a member, a local alias,
    # another namespace's) cannot be told apart from it by a scan: left out.
    elsewhere = {}
    for f in files:
        for n in set(ANY_TYPE.findall(code[f])) | set(ANY_ALIAS.findall(code[f])):
            elsewhere[n] = elsewhere.get(n, 0) + 1
    owner = {n: (next(iter(hs)), function) for n, (hs, function) in declared.items()
             if len(hs) == 1 and n not in COMMON and len(n) > 3 and elsewhere.get(n, 0) <= 1}

    # A public function that an internal header declares again in its own
    # namespace (the check_result forms of the path checks, say): a file that
    # reaches the internal one may mean it.
    internal_functions = {}
    for h in headers:
        if os.path.relpath(h, root).startswith("src" + os.sep):
            for n in set(FUNCTION.findall(code[h])):
                internal_functions.setdefault(n, set()).add(h)

    findings = []
    # The boundary: what the tools and the lab may include besides their own.
    forbidden = {"tools": ("src", "lab"), "lab": ("src",)}
    for f in sorted(files):
        rel = os.path.relpath(f, root).split(os.sep)
        top = rel[0]
        layer = rel[1] if top == "src" and len(rel) > 2 else None
        if layer is not None and layer not in LAYERS:
            findings.append(f"{os.path.relpath(f, root)}: src/{layer}/ is a folder outside the layers' graph "
                            "(tests/check_includes.py LAYERS, docs/design.md)")
        for kind, name in INCLUDE.findall(texts[f]):
            if layer == "lock" and kind == "<" and name == "zookeeper.h":
                findings.append(f"{os.path.relpath(f, root)}: includes <zookeeper.h>: the lock layer is "
                                "backend-neutral")
            target = resolve(f, kind, name)
            if layer in LAYERS and target:
                trel = os.path.relpath(target, root).split(os.sep)
                if trel[0] == "src" and len(trel) > 2 and trel[1] != layer and trel[1] not in LAYERS[layer]:
                    findings.append(f"{os.path.relpath(f, root)}: includes {os.path.relpath(target, root)}, up the "
                                    f"layers (src/{layer}/ may include {', '.join(sorted(LAYERS[layer])) or 'none'})")
            if top in forbidden and target and os.path.relpath(target, root).split(os.sep)[0] in forbidden[top]:
                findings.append(f"{os.path.relpath(f, root)}: includes {os.path.relpath(target, root)}, across the "
                                f"boundary ({top}/ may not include {os.path.relpath(target, root).split(os.sep)[0]}/)")
    for f in sorted(files):
        reachable = closure(f)
        own = set(TYPE.findall(code[f])) | set(ALIAS.findall(code[f]))
        # A forward declaration in the file or what it includes names a type
        # well enough for a pointer or a reference.
        for g in reachable:
            own |= set(FORWARD.findall(code[g]))
        reported = set()
        text = code[f]
        for m in TOKEN.finditer(text):
            n = m.group(1)
            if n not in owner or n in own or n in reported:
                continue
            h, function = owner[n]
            if h in reachable or (function and internal_functions.get(n, set()) & reachable):
                continue
            after = text[m.end():m.end() + 40]
            # A snake_case name is also what code calls its variables: only a
            # call (a function), or a type's use (a declaration, a construction,
            # a template argument, a scope) counts.
            if function and not re.match(r"\s*\(", after):
                continue
            # A declaration ("void name(", "std::string name(") is no call.
            before = re.search(r"([A-Za-z_]\w*|[>&*])\s*$", text[max(0, m.start() - 40):m.start()])
            if function and before and before.group(1) not in ("return", "co_await", "co_return", "else"):
                continue
            if not function and n.islower() and not re.match(
                    r"\s*(?:(?!and\b|or\b)[A-Za-z_]\w*\s*[;=,({)\[]|<|::|\{|&\s*[A-Za-z_]|\*\s*[A-Za-z_]|>)", after):
                continue
            reported.add(n)
            findings.append(f"{os.path.relpath(f, root)}: uses {n}, declared in {os.path.relpath(h, root)}, "
                            "without including it")
    for line in findings:
        print(line)
    if findings:
        print(f"check_includes: {len(findings)} finding(s): a name used without its header, or an include "
              "across the boundary", file=sys.stderr)
        return 1
    print(f"check_includes: {len(files)} files include what they use of {len(owner)} names of zklock's headers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
