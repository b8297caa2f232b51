"""Every public callable has a docstring, and the examples of those written outside the
op table (Tensor methods, nn.functional composites, generated at first use and so
invisible to pytest's doctest collection) run."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import tensormodes as tm
from tensormodes._ops import OPS
from tensormodes.overrides import get_overridable_functions, resolve_name

_KERNEL_DOCS = {opdef.doc for opdef in OPS.values()}
PUBLIC = [f for funcs in get_overridable_functions().values() for f in funcs]


def test_every_public_callable_has_a_docstring():
    missing = [resolve_name(f) for f in PUBLIC
               if f.__name__ not in ("__get__", "__set__") and not (f.__doc__ or "").strip()]
    assert not missing


OWN_EXAMPLES = sorted({f for f in PUBLIC if f.__name__ not in ("__get__", "__set__") and f.__doc__
                       and ">>>" in f.__doc__ and f.__doc__ not in _KERNEL_DOCS}, key=resolve_name)


@pytest.mark.parametrize("func", OWN_EXAMPLES, ids=[resolve_name(f) for f in OWN_EXAMPLES])
def test_docstring_examples_run(func):
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in finder.find(func, resolve_name(func), globs={"tm": tm}):
        result = runner.run(test)
        assert result.failed == 0, f"{resolve_name(func)}: {result.failed} failing example(s)"


DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.parametrize("name", ["generated-code.md", "custom-ops.md"])
def test_documentation_examples_run(name):
    failed, attempted = doctest.testfile(str(DOCS / name), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0
