"""The families of ``tensormodes.nn.functional``, one private module each (activation, loss,
normalization, padding, embedding, distance, attention, convolution, pooling, dropout, vision). Their functions
register themselves in ``_common.EXPORTS``, which ``nn.functional`` re-exports.

Their parameters are annotated with the op table's annotation-only ``Tensor`` marker: as for
kernels, the annotation's text is what marks the parameters that may carry overrides.
"""

from . import (  # noqa: F401 - importing a family registers its functions
    activation,
    attention,
    convolution,
    distance,
    dropout,
    embedding,
    loss,
    normalization,
    padding,
    pooling,
    vision,
)
from ._common import EXPORTS

__all__ = ["EXPORTS"]
