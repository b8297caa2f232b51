"""Writes tests/data/torch_attributes.pt and torch_attributes_legacy.pt with torch 2.13 (run once;
the files are committed so the tests need no torch): tensors with attributes of their own, a
Parameter with one, a tensor that requires grad, a meta, an empty and a 0-d tensor."""

import pathlib

import torch

noted = torch.arange(3.0)
noted.note = "kept"
p = torch.nn.Parameter(torch.ones(2))
p.lr_scale = 0.5
obj = {"noted": noted, "p": p, "r": torch.tensor([1.0, 2.0], requires_grad=True),
       "meta": torch.empty(2, 3, device="meta"), "empty": torch.empty(0, 3), "scalar": torch.tensor(3.5)}
here = pathlib.Path(__file__).parent
torch.save(obj, here / "torch_attributes.pt")
torch.save(obj, here / "torch_attributes_legacy.pt", _use_new_zipfile_serialization=False)
