"""Layer 1 of docs/layout.md: PyTorch's checkpoint files, read and written without Python's pickle.

``serialization`` (the public ``save``/``load``) uses it for every file that is not a
``.safetensors`` file. Its modules: ``errors`` (the exceptions), ``ziparchive`` (the
uncompressed zip PyTorch writes, read and written), ``unpickler`` (a restricted interpreter of
the pickle opcodes, which builds allow-listed objects only and imports or calls nothing named
by a file), ``pickler`` (a protocol-2 writer of the values PyTorch's ``weights_only`` reader
accepts), ``safe_globals`` (the user's allow-list of plain-data classes), ``options`` (PyTorch's
serialization settings: CRC-32s, mmap flags, byte order, ``skip_data``) and ``pytorch_format``
(checkpoints: storages, tensors, ``map_location``, the zip and legacy layouts). It imports the
layers below and the core namespace; nothing here imports ``serialization``.
"""
