"""scripts/linecount.py: lines per file, folder by folder, with totals."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_linecount_lists_every_file_with_folder_and_grand_totals():
    shown = subprocess.run([sys.executable, str(ROOT / "scripts" / "linecount.py")], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    package = ROOT / "src" / "tensormodes"
    files = sorted(package.rglob("*.py"))
    counts = {path: len(path.read_bytes().splitlines()) for path in files}
    assert shown[-1].split() == ["total", str(sum(counts.values()))]
    registry = package / "_ops" / "registry.py"
    folder = shown.index("src/tensormodes/_ops/")
    section = shown[folder + 1:shown.index(next(line for line in shown[folder + 1:] if "(folder)" in line))]
    assert f"registry.py {counts[registry]}" in [" ".join(line.split()) for line in section]
    folder_total = next(line for line in shown[folder + 1:] if "(folder)" in line)
    assert int(folder_total.split()[-1]) == sum(n for path, n in counts.items() if path.parent == registry.parent)
