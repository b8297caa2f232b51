"""Print the lines of every Python file of the package, folder by folder, with totals.

Keeping sizes visible keeps files a size one can read (a few hundred to about a thousand
lines): run ``python scripts/linecount.py`` (or give other folders as arguments).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def count_lines(path: Path) -> int:
    with path.open("rb") as file:
        return sum(1 for _ in file)


def report(folders: list[Path]) -> str:
    """A table of lines per file, grouped by folder, each folder with its total, then the total."""
    by_folder: dict[Path, list[tuple[str, int]]] = defaultdict(list)
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            by_folder[path.parent].append((path.name, count_lines(path)))
    width = max((len(name) for files in by_folder.values() for name, _ in files), default=10) + 2
    lines, total = [], 0
    for folder in sorted(by_folder):
        files = by_folder[folder]
        subtotal = sum(count for _, count in files)
        total += subtotal
        lines.append(f"{folder.relative_to(ROOT)}/")
        lines.extend(f"  {name:<{width}}{count:>7}" for name, count in files)
        lines.append(f"  {'(folder)':<{width}}{subtotal:>7}")
    lines.append(f"{'total':<{width + 2}}{total:>7}")
    return "\n".join(lines)


if __name__ == "__main__":
    targets = [Path(arg).resolve() for arg in sys.argv[1:]] or [ROOT / "src" / "tensormodes"]
    print(report(targets))
