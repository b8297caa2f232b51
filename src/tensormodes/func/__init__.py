"""``tensormodes.func``: PyTorch's function transforms (``torch.func``).

``functional_call`` runs a module with given parameters and buffers, so a loss becomes a
function of them (``stack_module_state`` stacks an ensemble's); ``grad``, ``grad_and_value``,
``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd`` and ``hessian`` differentiate functions
of pytrees of tensors and nest; ``vmap`` maps a function over a batch dimension;
``functionalize`` and ``debug_unwrap`` have nothing to undo here (``_unwrapped``). Everything
is built on this library's reverse-mode autograd (``jvp`` and ``jacfwd`` included: no forward
mode), and ``vmap`` runs the function once per batch element rather than through batching
rules (see ``_vmap``): the same values, at a per-element cost.

Per-sample gradients of a model, as PyTorch's tutorial computes them:

>>> import tensormodes as tm
>>> from tensormodes.func import functional_call, grad, vmap
>>> model = tm.nn.Linear(3, 1)
>>> params = {name: p.detach() for name, p in model.named_parameters()}
>>> def loss(params, x, y):
...     return tm.nn.functional.mse_loss(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))
>>> x, y = tm.randn(8, 3), tm.randn(8, 1)
>>> per_sample = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
>>> per_sample["weight"].shape
tensormodes.Size([8, 1, 3])
"""

from ._derivatives import grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize, vjp
from ._module_state import functional_call, replace_all_batch_norm_modules_, stack_module_state
from ._unwrapped import debug_unwrap, functionalize
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "vjp", "functional_call", "stack_module_state", "debug_unwrap"]
