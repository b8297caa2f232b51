"""The README's examples run (as one script, in order) and say what they claim."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_blocks_run(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 4
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert "inner zeros\nouter zeros" in out
    assert "add" in out


def test_readme_opens_with_the_two_setup_commands():
    text = README.read_text()
    commands = re.search(r"```bash\n(.*?)```", text, re.S).group(1).strip().splitlines()
    assert commands == [
        'python3 -m venv .venv && . .venv/bin/activate && pip install ".[examples]" && '
        "tensormodes trace examples/train_digits.py --flops --count --nan --shapes -- --epochs 3",
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && python -m pytest -q',
    ]
    ci = (README.parent / ".ci" / "run").read_text()
    assert commands[1] in ci, ".ci/run must call the README's test command verbatim"
