"""Sizes kept visible: no source file above 1,000 lines, no function above 80 lines unless a
``# long:`` comment says why (on the line just above its ``def`` or its decorators, or on the
first line of its body). Every run prints the five largest files and functions (``pytest -s``)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tensormodes"
MAX_FILE_LINES = 1000
MAX_FUNCTION_LINES = 80
SHOWN = 5


@functools.cache
def file_sizes(package: Path = PACKAGE) -> dict[str, int]:
    """Lines per source file, by path relative to the package's parent."""
    return {str(path.relative_to(package.parent)): len(path.read_bytes().splitlines())
            for path in sorted(package.rglob("*.py"))}


def _reason(lines: list[str], number: int) -> bool:
    """True if line ``number`` (1-based) is a ``# long:`` comment giving a reason."""
    if not 1 <= number <= len(lines):
        return False
    text = lines[number - 1].strip()
    return text.startswith("# long:") and bool(text.removeprefix("# long:").strip())


def function_sizes(source: str) -> list[tuple[str, int, bool]]:
    """``(qualified name, lines from def to end, has a # long: reason)`` for every function and
    method in ``source``, nested ones included."""
    lines = source.splitlines()
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                top = min([child.lineno] + [d.lineno for d in child.decorator_list])
                # The first body line: a comment between the header (which may span lines) and the
                # first statement.
                excused = _reason(lines, top - 1) or any(
                    _reason(lines, n) for n in range(child.lineno + 1, child.body[0].lineno))
                found.append((name, child.end_lineno - child.lineno + 1, excused))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


@functools.cache
def all_function_sizes(package: Path = PACKAGE) -> list[tuple[str, int, bool]]:
    """``("path:qualified name", lines, excused)`` for every function of the package."""
    sizes = []
    for path in sorted(package.rglob("*.py")):
        where = str(path.relative_to(package.parent))
        sizes.extend((f"{where}:{name}", n, excused) for name, n, excused in function_sizes(path.read_text()))
    return sizes


def largest_report() -> str:
    files = sorted(file_sizes().items(), key=lambda item: -item[1])[:SHOWN]
    functions = sorted(all_function_sizes(), key=lambda item: -item[1])[:SHOWN]
    return "\n".join([f"the {SHOWN} largest files:"] + [f"  {n:>6}  {name}" for name, n in files]
                     + [f"the {SHOWN} largest functions:"]
                     + [f"  {n:>6}  {name}{'  (# long:)' if excused else ''}" for name, n, excused in functions])


def test_no_file_above_the_limit():
    report = largest_report()
    print("\n" + report)
    over = [f"{name} ({n} lines)" for name, n in file_sizes().items() if n > MAX_FILE_LINES]
    assert not over, f"files above {MAX_FILE_LINES} lines (split them by family): {over}\n{report}"


def test_no_long_function_without_a_reason():
    report = largest_report()
    print("\n" + report)
    over = [f"{name} ({n} lines)" for name, n, excused in all_function_sizes()
            if n > MAX_FUNCTION_LINES and not excused]
    assert not over, (f"functions above {MAX_FUNCTION_LINES} lines without a '# long: <reason>' comment just above "
                      f"their def or on their first body line: {over}\n{report}")


def test_the_reason_comment_is_found_where_documented():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    indented = "\n".join("    " + line for line in body.splitlines())
    source = (f"# long: one table, read top to bottom\ndef above():\n{body}\n\n"
              f"@staticmethod\ndef first_line(a,\n          b):\n    # long: a generated sequence\n{body}\n\n"
              f"class C:\n    def plain(self):\n{indented}\n\n"
              f"# long:\ndef no_reason():\n{body}\n")
    sizes = {name: (n, excused) for name, n, excused in function_sizes(source)}
    assert sizes == {"above": (MAX_FUNCTION_LINES + 1, True), "first_line": (MAX_FUNCTION_LINES + 3, True),
                     "C.plain": (MAX_FUNCTION_LINES + 1, False), "no_reason": (MAX_FUNCTION_LINES + 1, False)}
