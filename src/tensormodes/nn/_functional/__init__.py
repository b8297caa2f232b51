"""``nn.functional``'s private modules, one family each; ``nn/functional.py`` re-exports them."""
