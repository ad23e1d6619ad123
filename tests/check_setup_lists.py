#!/usr/bin/env python3
"""scripts/setup's package lists hold what building needs, measured.

Two checks, both cheap (a few dpkg queries, no compiling, no server):

1. What the configure step finds is installed by `scripts/setup --build`
   and `--peers`.
   zklock is configured with the default options in a temporary directory
   (configured only: seconds), and every absolute path in its CMakeCache.txt
   (the libraries, headers, CMake packages and programs that find_package,
   pkg_check_modules, find_program and the compiler checks found), and every
   path given with --path (files the configure step tests with if(EXISTS)
   and does not cache, such as the Curator jars), is mapped to the Debian
   package that owns it with `dpkg-query -S`. Each such package must be in
   the list, or be pulled in by a package in the list (Depends and
   Pre-Depends, followed through the installed packages), or be essential.
   The default options build the tests too, so every lookup behind a
   default-ON option is measured, the test build's included; what an
   optional lookup found (doxygen, go, javac) is measured too, since the list
   installs it for the tests that use it, and what it did not find is not.
   A fresh directory rather than the build's own cache, which keeps the
   entries of a lookup that was removed. A path no package owns (a program
   installed by hand, say a Python of pyenv's) is named but does not fail:
   a clean Debian machine finds the packaged one instead.

2. debian/control's Build-Depends are `scripts/setup --package`'s list, less
   the packaging tools (PACKAGING_ONLY).

    tests/check_setup_lists.py --setup scripts/setup --control debian/control
        [--cmake CMAKE] [--generator G] [--source-dir DIR] [--path FILE]...

Exit status 0 when both hold, 1 otherwise (each finding on a line, naming
the package).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# In `scripts/setup --package`'s list and not in Build-Depends: the toolchain,
# which Build-Depends leave out by Debian policy (build-essential is assumed),
# and the tools that build and check the packages (debhelper is named by
# debhelper-compat in Build-Depends).
PACKAGING_ONLY = {"build-essential", "debhelper", "dpkg-dev", "lintian"}
# In Build-Depends and not a package of the list: debhelper's compatibility
# level, the build system's own dependency.
CONTROL_ONLY = {"debhelper-compat"}

# Cache entries whose paths are where zklock would install, not what it found.
SKIPPED_KEYS = re.compile(r"^(CMAKE_INSTALL_|_GNUInstallDirs_|ZKLOCK_INSTALL_)")


def setup_list(setup, mode):
    out = subprocess.run([setup, mode, "--list"], check=True, capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def cache_paths(cache, source_dir, build_dir):
    """The existing absolute paths in CMakeCache.txt, each with the entry that holds it."""
    found = {}
    entry = re.compile(r"^([^#/][^:=]*):[A-Z]+=(.*)$")
    with open(cache, encoding="utf-8") as f:
        for line in f:
            m = entry.match(line.rstrip("\n"))
            if not m or SKIPPED_KEYS.match(m.group(1)):
                continue
            for value in m.group(2).split(";"):
                value = value.rstrip("/")
                if not value.startswith("/") or not os.path.exists(value):
                    continue
                real = os.path.realpath(value)
                if any(p == d or p.startswith(d + "/") for d in (source_dir, build_dir) for p in (value, real)):
                    continue
                found.setdefault(value, m.group(1))
    return found


def owners(paths):
    """{path: set of packages that own it} for the paths some package owns."""
    result = {}
    if not paths:
        return result
    out = subprocess.run(["dpkg-query", "-S", *paths], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("diversion by"):
            continue
        packages, sep, path = line.partition(": ")
        if not sep or path not in paths:
            continue
        result.setdefault(path, set()).update(p.strip().split(":")[0] for p in packages.split(","))
    return result


def installed_packages():
    """{name: (essential, [[alternative, ...], ...] of Depends and Pre-Depends)} and {virtual: {provider}}."""
    fmt = "${Package}\t${Status}\t${Essential}\t${Provides}\t${Depends}, ${Pre-Depends}\n"
    out = subprocess.run(["dpkg-query", "-W", "-f", fmt], check=True, capture_output=True, text=True).stdout
    packages, provides = {}, {}

    def names(text):
        return [re.split(r"[\s(:\[]", alt.strip(), maxsplit=1)[0] for alt in text.split("|") if alt.strip()]

    for line in out.splitlines():
        name, status, essential, provided, depends = (line.split("\t") + [""] * 5)[:5]
        if not status.endswith(" installed"):
            continue
        groups = [names(group) for group in depends.split(",") if group.strip()]
        packages[name] = (essential == "yes", groups)
        for virtual in names(provided.replace(",", "|")):
            provides.setdefault(virtual, set()).add(name)
    return packages, provides


def closure(roots, packages, provides):
    """The installed packages that the roots pull in (every installed alternative counts)."""
    seen, todo = set(), list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for group in packages.get(name, (False, []))[1]:
            for alt in group:
                todo.extend(p for p in {alt} | provides.get(alt, set()) if p in packages)
    return seen


def control_build_depends(control):
    """The package names of the source paragraph's Build-Depends (comments dropped)."""
    text, field = [], False
    with open(control, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            if not line.strip():
                break
            if line[0] not in " \t":
                field = line.lower().startswith("build-depends:")
                line = line.split(":", 1)[1] if field else line
            if field:
                text.append(line)
    names = set()
    for group in " ".join(text).split(","):
        for alt in group.split("|"):
            alt = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", alt).strip()
            if alt:
                names.add(alt.split(":")[0])
    return names


def configure(args, build_dir, findings):
    """Configures zklock with the default options in build_dir; False (and a finding) if that fails."""
    command = [args.cmake, "-S", args.source_dir, "-B", build_dir]
    if args.generator:
        command += ["-G", args.generator]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        tail = "\n".join((run.stdout + run.stderr).splitlines()[-20:])
        findings.append(f"the default configure failed ({' '.join(command)}):\n{tail}")
        return False
    return True


def check_found(args, findings):
    # The configure step of scripts/test runs once before the peers are
    # installed and once after: what it finds comes from both lists.
    listed = setup_list(args.setup, "--build") + setup_list(args.setup, "--peers")
    with tempfile.TemporaryDirectory(prefix="zklock-setup-lists-") as build_dir:
        if not configure(args, build_dir, findings):
            return
        paths = cache_paths(os.path.join(build_dir, "CMakeCache.txt"), os.path.realpath(args.source_dir),
                            os.path.realpath(build_dir))
    for extra in args.path:
        if os.path.exists(extra):
            paths.setdefault(extra, "--path")
    owned = owners(list(paths))
    # A link that no package owns (an alternative such as /usr/bin/c++, a
    # symlink made by hand) is owned through its target; with merged /usr a
    # file of /usr/bin may be known to dpkg as /bin's.
    targets = {}
    for path in paths:
        if path not in owned:
            target = os.path.realpath(path)
            if target == path and re.match(r"^/usr/(s?bin|lib)/", path):
                target = path[len("/usr"):]
            targets[path] = target
    owned_targets = owners(sorted(set(targets.values())))
    for path, target in targets.items():
        if target in owned_targets:
            owned[path] = owned_targets[target]

    packages, provides = installed_packages()
    missing_listed = [p for p in listed if p not in packages]
    for name in missing_listed:
        findings.append(f"scripts/setup --build or --peers lists {name}, which is not installed here: run scripts/setup")
    have = closure(listed + [p for p, (essential, _) in packages.items() if essential], packages, provides)
    needed = {}
    for path, key in sorted(paths.items()):
        if path not in owned:
            print(f"note: {key} = {path}: no Debian package owns it (not checked)")
            continue
        if not owned[path] & have:
            for name in sorted(owned[path]):
                needed.setdefault(name, []).append(f"{key} = {path}")
    # A needed package that another needed one pulls in (and that does not
    # pull that one in turn) is named only through that one.
    pulls = {name: closure([name], packages, provides) for name in needed}
    for name in [n for n in needed if any(n in pulls[o] and o not in pulls[n] for o in needed if o != n)]:
        del needed[name]
    for name, uses in sorted(needed.items()):
        findings.append(f"{name} is needed by the configure step ({'; '.join(uses)}) but scripts/setup --build "
                        f"neither lists it nor installs it with a package it lists: add {name} to scripts/setup")
    print(f"checked {len(paths)} paths the configure step found against the {len(listed)} packages of "
          f"scripts/setup --build")


def check_control(args, findings):
    listed = set(setup_list(args.setup, "--package")) - PACKAGING_ONLY
    control = control_build_depends(args.control) - CONTROL_ONLY
    for name in sorted(listed - control):
        findings.append(f"{name} is in scripts/setup --package's list but not in {args.control}'s Build-Depends")
    for name in sorted(control - listed):
        findings.append(f"{name} is in {args.control}'s Build-Depends but not in scripts/setup --package's list")
    print(f"checked {len(control)} Build-Depends of {args.control} against scripts/setup --package "
          f"(less {', '.join(sorted(PACKAGING_ONLY))})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--setup", required=True, help="scripts/setup")
    parser.add_argument("--control", required=True, help="debian/control")
    parser.add_argument("--cmake", default="cmake", help="the cmake program")
    parser.add_argument("--generator", help="the CMake generator (default: cmake's)")
    parser.add_argument("--source-dir", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="zklock's source tree (its paths are not dependencies)")
    parser.add_argument("--path", action="append", default=[], help="a file the configure step found, uncached")
    args = parser.parse_args()
    findings = []
    check_found(args, findings)
    check_control(args, findings)
    for finding in findings:
        print(finding)
    print("setup lists: " + ("ok" if not findings else f"{len(findings)} finding(s)"))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
