"""Functional neural-network ops, as in ``torch.nn.functional``.

Each is a Python-level composite of public ops that takes part in the
protocol on its own: handlers see ``F.relu`` itself, and the ops it calls run
below the mode that handled it. They are defined by family in the private
modules of ``nn._functional`` and registered there; this module is their namespace.

>>> import tensormodes as tm
>>> import tensormodes.nn.functional as F
>>> F.relu(tm.tensor([-1., 2.])).tolist()
[0.0, 2.0]
"""

from ._functional import EXPORTS as _EXPORTS  # importing the package registers every family

globals().update(_EXPORTS)
__all__ = list(_EXPORTS)
