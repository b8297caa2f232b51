"""The dispatch level (DESIGN's layer 3½): what runs below autograd, decided in one place.

A call that autograd has seen reaches its kernel here. Today the rule is short — an op
whose arguments hold meta data (or ``device="meta"``) runs its meta rule, anything else its
NumPy kernel — and ``kernel_site`` writes it down once: as the text the generated code
inlines (so the plain path stays one frame from ``tm.add`` to NumPy) and as a function for
the hand-written paths. Dispatch-level modes, ``__torch_dispatch__`` subclasses and tracers
plug in at the same site.

It owns ``kernel_site`` (the kernel-call site), ``meta`` (meta execution: the device
check and the call of an op's meta rule), ``aten`` and ``python_dispatch`` (ops as objects,
the chain of modes and subclasses) and ``declared_ops`` (modes declaring the ops they handle).
It may import the kernels (``_ops``) and the
bottom (``_tensor_base``, ``_meta_array``, ``_dtype``, ``_device``), never the layers above.
"""
