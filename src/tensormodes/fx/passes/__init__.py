"""Graph passes: dead code, common subexpressions, constant folding, shape propagation.

Every pass edits the GraphModule's graph in place, recompiles it and returns whether it
changed anything; what a pass may move, merge or drop comes from the op table's facts
(random ops and in-place writes are never merged, folded or dropped).

>>> import tensormodes as tm
>>> from tensormodes import fx
>>> from tensormodes.fx import passes
>>> gm = fx.symbolic_trace(lambda x: (x + 1) * (x + 1) + tm.ones(2).sum())
>>> passes.common_subexpression_elimination(gm), passes.fold_constants(gm)
(True, True)
>>> print(gm.code.strip())
def forward(self, x):
    add = x + 1;  x = None
    mul = add * add;  add = None
    _folded_constant0 = self._folded_constant0
    add_2 = mul + _folded_constant0;  mul = _folded_constant0 = None
    return add_2
"""

from __future__ import annotations

from .const_fold import fold_constants
from .cse import common_subexpression_elimination
from .dce import dead_code_elimination
from .shape_prop import ShapeProp, TensorMetadata

__all__ = ["dead_code_elimination", "common_subexpression_elimination", "fold_constants", "ShapeProp",
           "TensorMetadata"]
