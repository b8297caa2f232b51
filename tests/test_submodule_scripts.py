"""Tutorial-style training loops over the submodules of issue 26 item 2, run unmodified on both
libraries (``L`` is the library): a char-RNN on packed sequences, a VAE with
``distributions``, and a transformer stack with gradient checkpointing. Same initial weights and
seeds, so the losses must agree step by step."""

from __future__ import annotations

import numpy as np
import pytest

import tensormodes as tm

pytestmark = pytest.mark.torch


def _copy_weights(ours, theirs):
    import torch

    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})


class _Models:
    """Model classes built for one library, so that one script serves both."""

    def __init__(self, L):
        nn = L.nn

        class CharRNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 6)
                self.rnn = nn.LSTM(6, 8, num_layers=2, batch_first=True, bidirectional=True)
                self.head = nn.Linear(16, 10)

            def forward(self, tokens, lengths):
                packed = nn.utils.rnn.pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                                           enforce_sorted=False)
                out, _ = self.rnn(packed)
                padded, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=tokens.shape[1])
                return self.head(padded)

        class VAE(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.Linear(8, 2 * 3)
                self.decoder = nn.Sequential(nn.Linear(3, 8))

            def forward(self, x):
                mu, log_var = self.encoder(x).chunk(2, dim=-1)
                posterior = L.distributions.Normal(mu, (0.5 * log_var).exp())
                z = posterior.rsample()
                prior = L.distributions.Normal(L.zeros_like(mu), L.ones_like(mu))
                kl = L.distributions.kl_divergence(posterior, prior).sum(-1)
                reconstruction = nn.functional.binary_cross_entropy_with_logits(self.decoder(z), x, reduction="none")
                return (reconstruction.sum(-1) + kl).mean()

        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                # dropout=0: with dropout the layer's masks differ from PyTorch's for a seed, checkpoint
                # or not (an open bug of TransformerEncoderLayer, reported separately)
                self.layers = nn.ModuleList(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
                                            for _ in range(2))

            def forward(self, x):
                for layer in self.layers:
                    x = L.utils.checkpoint.checkpoint(layer, x, use_reentrant=False)
                return x

        self.CharRNN, self.VAE, self.Stack = CharRNN, VAE, Stack


def _losses(L, model, batches, loss_of, optimizer_cls, steps: int = 3):
    optimizer = optimizer_cls(model.parameters(), lr=0.05)
    losses = []
    L.manual_seed(11)
    for step in range(steps):
        optimizer.zero_grad()
        loss = loss_of(model, *batches[step % len(batches)])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def _run_both(make, batches_of, loss_of, optimizer_name):
    import torch
    import torch.utils.checkpoint  # noqa: F401 - torch.utils.checkpoint

    tm.manual_seed(0)
    ours = make(_Models(tm))
    theirs = make(_Models(torch))
    _copy_weights(ours, theirs)
    ours_losses = _losses(tm, ours, batches_of(tm), loss_of(tm), getattr(tm.optim, optimizer_name))
    theirs_losses = _losses(torch, theirs, batches_of(torch), loss_of(torch), getattr(torch.optim, optimizer_name))
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=2e-5, atol=1e-6)
    return ours_losses


def test_char_rnn_on_packed_sequences():
    data = np.array([[1, 2, 3, 4, 0], [5, 6, 0, 0, 0], [7, 8, 9, 1, 2], [3, 1, 4, 0, 0]])
    lengths = [4, 2, 5, 3]

    def batches(L):
        return [(L.tensor(data), lengths)]

    def loss_of(L):
        def loss(model, tokens, lengths):
            logits = model(tokens[:, :-1], [n - 1 if n > 1 else 1 for n in lengths])
            return L.nn.functional.cross_entropy(logits.reshape(-1, 10), tokens[:, 1:].reshape(-1), ignore_index=0)
        return loss

    losses = _run_both(lambda models: models.CharRNN(), batches, loss_of, "Adam")
    assert losses[-1] < losses[0]


def test_vae_with_distributions():
    data = (np.arange(32).reshape(4, 8) % 3 == 0).astype(np.float32)

    def batches(L):
        return [(L.tensor(data),)]

    def loss_of(L):
        return lambda model, x: model(x)

    _run_both(lambda models: models.VAE(), batches, loss_of, "SGD")


def test_transformer_stack_with_checkpointing():
    data = np.linspace(-1, 1, 48, dtype=np.float32).reshape(2, 3, 8)

    def batches(L):
        return [(L.tensor(data),)]

    weights = np.cos(np.arange(48, dtype=np.float32)).reshape(2, 3, 8)

    def loss_of(L):
        # a loss with gradients well above rounding (mean(x ** 2) after LayerNorm is ~1 whatever x)
        return lambda model, x: (model(x) * L.tensor(weights)).sum()

    _run_both(lambda models: models.Stack(), batches, loss_of, "SGD")
