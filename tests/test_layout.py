"""Imports only go down the layers of docs/layout.md, never form cycles, and never hide inside functions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tensormodes"
LAYOUT = Path(__file__).resolve().parents[1] / "docs" / "layout.md"


def read_layer_map(text: str) -> dict[str, int]:
    """The layer of each top-level module or folder, from the layer map table of docs/layout.md
    (rows ``| 2. override layer | `_overrides` | ... |``; 1 is the top)."""
    layers = {}
    for line in text.splitlines():
        match = re.match(r"\|\s*(\d+)\.[^|]*\|([^|]*)\|", line)
        if match:
            for name in re.findall(r"`([\w.]+)`", match.group(2)):
                layers[name] = int(match.group(1))
    return layers


# Higher number = lower layer. A module may import its own layer or lower ones.
LAYERS = read_layer_map(LAYOUT.read_text())


def test_layer_map_is_read():
    assert LAYERS["__init__"] == 1 and LAYERS["_overrides"] == 2 and LAYERS["_autograd"] == 3
    assert LAYERS["_dispatch"] == 4 and LAYERS["_ops"] == 5 and LAYERS["_tensor_base"] == 6


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def layer_of(name: str) -> int:
    top = name.split(".")[0]
    if top not in LAYERS:
        raise AssertionError(f"module {name!r} is not placed in a layer: add it to LAYERS and docs/layout.md")
    return LAYERS[top]


def resolve(current: str, node: ast.ImportFrom | ast.Import) -> list[str]:
    """Package-relative names imported by ``node`` (external imports are dropped)."""
    if isinstance(node, ast.Import):
        # ``import tensormodes as tm`` (public-API modules use tm.xxx at call time) names the package.
        return [a.name.removeprefix("tensormodes").lstrip(".") or "__init__"
                for a in node.names if a.name.startswith("tensormodes")]
    if node.level == 0:
        if not (node.module or "").startswith("tensormodes"):
            return []
        base = node.module.removeprefix("tensormodes").lstrip(".")
    else:
        parts = current.split(".")
        is_package = (PACKAGE / Path(*parts) / "__init__.py").exists() or current.endswith("__init__")
        parts = [p for p in parts if p != "__init__"]
        anchor = parts if is_package else parts[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([node.module] if node.module else []))
    if node.module is None:
        return [f"{base}.{a.name}".lstrip(".") for a in node.names]
    return [base or "__init__"]


def runtime_imports(tree: ast.Module):
    """Imports executed at import time (skipping ``if TYPE_CHECKING:`` blocks)."""
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for child in ast.walk(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child


MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_imports_only_go_down(path):
    current = module_name(path)
    tree = ast.parse(path.read_text())
    for node in runtime_imports(tree):
        for target in resolve(current, node):
            assert layer_of(target) >= layer_of(current), (
                f"{current} (layer {layer_of(current)}) imports {target} (layer {layer_of(target)}): upward import")


@pytest.mark.parametrize("path", MODULES, ids=lambda p: module_name(p))
def test_no_imports_inside_functions(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for child in ast.walk(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    names = resolve(module_name(path), child) if isinstance(child, ast.ImportFrom) else []
                    assert not names and not (isinstance(child, ast.Import) and any(
                        a.name.startswith("tensormodes") for a in child.names)), (
                        f"{module_name(path)}:{child.lineno} imports inside a function")


def test_importing_tensormodes_changes_nothing_global():
    import subprocess
    import sys

    code = ("import sys, numpy as np; before = (np.geterr(), sys.getrecursionlimit());"
            "import tensormodes, warnings;"
            "assert (np.geterr(), sys.getrecursionlimit()) == before; print('ok')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "ok", result.stderr


def _module_of(name: str, known: set[str]) -> str | None:
    """The module a resolved import name refers to (``_ops.nn.linear`` -> ``_ops.nn``)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def test_no_import_cycles():
    known = {module_name(p).removesuffix(".__init__") for p in MODULES}
    graph: dict[str, set[str]] = {name: set() for name in known}
    for path in MODULES:
        current = module_name(path)
        for node in runtime_imports(ast.parse(path.read_text())):
            for target in resolve(current, node):
                module = _module_of(target.removesuffix(".__init__"), known)
                if module and module != current.removesuffix(".__init__"):
                    graph[current.removesuffix(".__init__")].add(module)
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if name in path:
            raise AssertionError(f"import cycle: {' -> '.join(path[path.index(name):] + [name])}")
        if name in done:
            return
        for target in sorted(graph.get(name, ())):
            visit(target, path + [name])
        done.add(name)

    for name in sorted(graph):
        visit(name, [])


def _pytorch_spelled_names() -> set[str]:
    """Names PyTorch itself spells with a leading underscore (its ``torch._C`` API), which ``_C``
    re-exports: public here too, wherever they are imported from."""
    tree = ast.parse((PACKAGE / "_C.py").read_text())
    return {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
            for alias in node.names}


# Modules PyTorch itself keeps at private paths, public API all the same (``TorchDispatchMode``
# is imported from ``torch.utils._python_dispatch``, and PyTorch's own tools import its
# ``_disable_current_modes``): other folders may import their names, PyTorch's underscored ones too.
PYTORCH_PRIVATE_MODULES = ("utils._python_dispatch.", "utils._pytree.")


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_imports_across_folders() -> list[str]:
    """``module: name`` for every import of a private name, or of any name through a private
    module, from another top-level folder or module. What folders share is promoted to a
    documented internal API (a module or name without a leading underscore); the package face
    may re-export public names from anywhere."""
    allowed = _pytorch_spelled_names()
    found = []
    for path in MODULES:
        current = module_name(path)
        if current == "__init__":
            continue
        for node in runtime_imports(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            resolved = resolve(current, node)
            if not resolved:
                continue  # not this package
            for i, alias in enumerate(node.names):
                target = f"{resolved[0]}.{alias.name}" if node.module else resolved[i]
                parts = target.removesuffix(".__init__").split(".")
                if parts[0] == current.split(".")[0] or alias.name in allowed or \
                        target.startswith(PYTORCH_PRIVATE_MODULES):
                    continue
                # the top-level unit itself may be private (``_ops``, ``_dtype``): it is a layer's place
                if any(_is_private(p) for p in parts[1:]):
                    found.append(f"{current}: {target}")
    return found


def test_no_private_names_imported_across_folders():
    assert private_imports_across_folders() == []


def test_no_global_statements_and_no_late_imports():
    """Module state that changes lives in a small object or a ContextVar, never behind
    ``global``; and the package's modules import at the top (no ``noqa: E402``)."""
    offenders = []
    for path in MODULES:
        text = path.read_text()
        tree = ast.parse(text)
        offenders += [f"{module_name(path)}:{n.lineno} global" for n in ast.walk(tree) if isinstance(n, ast.Global)]
        offenders += [f"{module_name(path)}:{i} E402" for i, line in enumerate(text.splitlines(), 1)
                      if "noqa: E402" in line]
    assert offenders == []
