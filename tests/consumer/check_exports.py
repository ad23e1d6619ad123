#!/usr/bin/env python3
"""What a shared zklock library exports is what its installed headers declare.

    check_exports.py INCLUDEDIR LIBRARY...

For each library (libzklock.so, libzklock_redis.so, ...) reads its dynamic
symbols (`nm -DC --defined-only`) and, for each of zklock's (a function, a
member, a static datum, a class's vtable or typeinfo), finds the entity it
belongs to: the first name after its namespaces (a class, or a free function).
That name must be declared in that namespace by a header installed with the
library (libzklock: the headers outside testing/ and the backends' folders;
a backend's or a testing library's: its folder's and the core's), so a
library exports nothing its users cannot name: no test hook of a library that
is not installed, no internal type. Prints each symbol that is not and exits
1; prints the count checked and exits 0 otherwise.
"""
import os
import re
import subprocess
import sys

BACKEND_DIRS = ("redis", "postgres", "mysql", "memcached", "etcd")
# Demangled prefixes of the symbols that belong to an entity.
PREFIXES = re.compile(r"^(?:(?:typeinfo name|typeinfo|vtable|VTT|guard variable|construction vtable) for "
                      r"|(?:non-)?virtual thunk to |covariant return thunk to )+")


def headers_of(includedir, library):
    """The installed headers that declare what `library` may export."""
    base = os.path.basename(library).split(".so")[0]  # libzklock_redis
    name = base[len("libzklock"):].lstrip("_")       # redis, testing, testing_backends, backends, ''
    root = os.path.join(includedir, "zklock")
    own_dirs = {"": [""], "backends": [""], "testing": ["testing"], "testing_backends": ["testing"]}.get(name, [name])
    dirs = set(own_dirs) | {""}
    found = []
    for top, subdirs, files in os.walk(root):
        rel = os.path.relpath(top, root)
        first = "" if rel == "." else rel.split(os.sep)[0]
        core = first not in BACKEND_DIRS + ("testing",)
        if first in dirs or core:
            found += [os.path.join(top, f) for f in files if f.endswith((".hpp", ".h"))]
    return found


def declarations(headers):
    """{namespace: text of the parts of the headers in it} (by `namespace a::b {`)."""
    by_namespace = {}
    for path in headers:
        with open(path, encoding="utf-8") as f:
            # Code only: a comment or a string naming a thing declares nothing.
            text = re.sub(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"", " ", f.read(), flags=re.S)
        for m in re.finditer(r"\bnamespace\s+([A-Za-z_][\w:]*)\s*\{", text):
            by_namespace.setdefault(m.group(1), []).append(text[m.end():])
    return {ns: "\n".join(parts) for ns, parts in by_namespace.items()}


def strip_templates(name):
    out, depth = [], 0
    i = 0
    while i < len(name):
        if name.startswith("operator", i) and (i == 0 or name[i - 2:i] == "::"):
            out.append("operator")  # operator<, operator() ...: the name is enough
            i += len("operator")
            while i < len(name) and name[i] not in "(":
                i += 1
            continue
        c = name[i]
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            out.append(c)
        i += 1
    return "".join(out)


def entity(symbol, namespaces):
    """(namespace, first name after it) of a demangled zklock symbol, or None."""
    name = re.sub(r"\[abi:[^\]]*\]", "", PREFIXES.sub("", symbol))
    if not name.startswith("zklock::"):
        return None
    name = strip_templates(name.split("(", 1)[0] if not name.startswith("zklock::operator") else name)
    parts = name.split("::")
    ns = "zklock"
    i = 1
    while i < len(parts) - 1 and f"{ns}::{parts[i]}" in namespaces:
        ns = f"{ns}::{parts[i]}"
        i += 1
    return ns, parts[i].split(" ")[0]


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    includedir, libraries = argv[1], argv[2:]
    failures, checked = [], 0
    for library in libraries:
        decls = declarations(headers_of(includedir, library))
        namespaces = set(decls)
        for ns in list(namespaces):  # a::b::c declares a and a::b too
            parts = ns.split("::")
            namespaces |= {"::".join(parts[:k]) for k in range(1, len(parts))}
        out = subprocess.run(["nm", "-DC", "--defined-only", library], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            fields = line.split(" ", 2)
            if len(fields) < 3:
                continue
            found = entity(fields[2], namespaces)
            if found is None:
                continue
            checked += 1
            ns, name = found
            if ns not in decls or not re.search(rf"\b{re.escape(name)}\b", decls[ns]):
                failures.append(f"{os.path.basename(library)}: {fields[2]}  ({ns}::{name} is in no installed "
                                "header of the library)")
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        print(f"check_exports: {len(failures)} of {checked} exported zklock symbols are declared by no installed "
              "header of their library", file=sys.stderr)
        return 1
    print(f"check_exports: the {checked} exported zklock symbols of {len(libraries)} libraries are declared by "
          "their installed headers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
