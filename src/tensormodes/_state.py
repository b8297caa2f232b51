"""The one context variable that holds the override protocol's and the dispatch level's
dynamic state: the ``__torch_function__`` mode stack, the ``TorchDispatchMode`` stack and
the flags that switch parts of them off.

It lives at the bottom so that every layer can read it: the override layer
(``_overrides.dispatch``) defines the state's value type and its scopes; the dispatch level
(``_dispatch.python_dispatch``) reads and narrows the dispatch-mode part of it. Being a
``ContextVar``, each thread and each asyncio task has its own stack. ``None`` means idle:
no mode of either kind, nothing disabled — the hot path's single test.

>>> STATE.get() is None
True
"""

from __future__ import annotations

from contextvars import ContextVar

__all__ = ["STATE"]

STATE: ContextVar = ContextVar("tensormodes_torch_function_state", default=None)
