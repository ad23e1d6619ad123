#!/usr/bin/env python3
"""The docs stay reports (CONTRIBUTING.md, "Docs"): README.md at most 350
lines, docs/design.md at most 500, docs/benchmarks.md at most 300, and no
line of the project's Markdown wider than 120 columns but a table row's.

    check_docs_sizes.py SOURCE_DIR

Prints each breach and exits 1; exits 0 when there is none."""
import pathlib
import sys

LIMITS = {"README.md": 350, "docs/design.md": 500, "docs/benchmarks.md": 300}
WIDTH = 120


def breaches(root: pathlib.Path):
    for name, limit in LIMITS.items():
        lines = (root / name).read_text(encoding="utf-8").splitlines()
        if len(lines) > limit:
            yield f"{name}: {len(lines)} lines, more than {limit}"
    pages = [root / "README.md", root / "CONTRIBUTING.md", root / "CHANGELOG.md"]
    pages += sorted((root / "docs").glob("*.md"))
    for page in pages:
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if len(line) > WIDTH and not line.lstrip().startswith("|"):
                yield f"{page.relative_to(root)}:{number}: {len(line)} columns, more than {WIDTH}"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found = list(breaches(pathlib.Path(sys.argv[1])))
    for b in found:
        print(b)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
