"""``nn.utils``: gradient clipping, flattening parameters to one vector, ``rnn`` (padded and
packed sequences), ``parametrize`` and ``parametrizations`` (``weight_norm``, ``spectral_norm``),
``stateless`` (a module called with other parameters and buffers: imported by ``tensormodes.func``, as
it needs ``nn.parallel``, which needs the layers, which need ``nn.utils.rnn``).

>>> import tensormodes as tm
>>> m = tm.nn.Linear(2, 2)
>>> tm.nn.utils.parameters_to_vector(m.parameters()).shape
tensormodes.Size([6])
"""

from . import parametrizations, parametrize, rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights
from .init import skip_init

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "rnn", "parametrize", "parametrizations",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "skip_init"]
