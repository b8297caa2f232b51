"""The families of ``tensormodes.nn.functional``, one private module each (activation, loss,
normalization, padding, embedding, distance, attention, convolution, dropout). Their functions
register themselves in ``_common.EXPORTS``, which ``nn.functional`` re-exports.
"""
