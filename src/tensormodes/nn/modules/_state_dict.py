"""``Module``'s state dicts: ``state_dict`` and ``load_state_dict`` (walked iteratively), their
hooks, and a module's extra state.
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Callable, Mapping
from typing import Any

from ..._api import namespace as tm
from ...overrides import is_tensor_like
from ..parameter import Parameter
from ._hooks import RemovableHandle

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the keys it missed and the keys it did not expect."""

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class _ModuleStateDict:
    """``Module``'s state dicts (a base class of ``Module``): what ``state_dict`` collects and
    ``load_state_dict`` restores, with their hooks and the extra state."""

    def get_extra_state(self) -> Any:
        """Return any extra state to include in the module's state_dict (override with ``set_extra_state``)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
                           "bug-report.yml to report this bug.")

    def set_extra_state(self, state: Any) -> None:
        """Set extra state contained in the loaded ``state_dict`` (override with ``get_extra_state``)."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. "
                           "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
                           "bug-report.yml to report this bug.")

    # ------------------------------------------------------------------ hooks

    def register_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Register ``hook(module, prefix, keep_vars)``, run before ``state_dict`` collects this module.

        >>> import tensormodes as tm
        >>> m = tm.nn.Linear(1, 1)
        >>> h = m.register_state_dict_pre_hook(lambda mod, prefix, keep: print("saving", repr(prefix)))
        >>> _ = m.state_dict()
        saving ''
        """
        handle = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[handle.id] = hook
        return handle

    def register_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Register ``hook(module, state_dict, prefix, local_metadata)``, which may edit the state dict in place.

        >>> import tensormodes as tm
        >>> m = tm.nn.Linear(1, 1)
        >>> h = m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: sd.pop(prefix + "bias"))
        >>> list(m.state_dict())
        ['weight']
        """
        handle = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[handle.id] = hook
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Register ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)``, run before ``load_state_dict`` loads this module; it may edit ``state_dict`` in place.

        >>> import tensormodes as tm
        >>> m = tm.nn.Linear(1, 1)
        >>> def rename(module, state_dict, prefix, *rest):
        ...     state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
        >>> h = m.register_load_state_dict_pre_hook(rename)
        >>> m.load_state_dict({"w": tm.ones(1, 1), "bias": tm.zeros(1)})
        <All keys matched successfully>
        """
        handle = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[handle.id] = functools.partial(hook, self)
        return handle

    def register_load_state_dict_post_hook(self, hook: Callable) -> RemovableHandle:
        """Register ``hook(module, incompatible_keys)``, run after ``load_state_dict``; it may edit the key lists.

        >>> import tensormodes as tm
        >>> m = tm.nn.Linear(1, 1)
        >>> h = m.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
        >>> m.load_state_dict({})
        <All keys matched successfully>
        """
        handle = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[handle.id] = hook
        return handle

    # ------------------------------------------------------------------ state dict

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not _ModuleStateDict.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args: Any, destination: dict | None = None, prefix: str = "",
                   keep_vars: bool = False) -> dict[str, Any]:
        """Return a dictionary containing references to the whole state of the module.

        Parameters and persistent buffers, keyed by their dotted names, as
        detached tensors (``keep_vars=True`` keeps them attached); an
        ``OrderedDict`` with PyTorch's ``_metadata``.

        >>> import tensormodes as tm
        >>> list(tm.nn.Sequential(tm.nn.Linear(2, 1), tm.nn.BatchNorm1d(1)).state_dict())
        ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked']
        """
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to https://pytorch.org/"
                          "docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for details.",
                          FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        # An explicit walk instead of recursion (deep module chains). As in PyTorch's recursion, a module's
        # pre-hooks and entries come before its children's, its post-hooks after them: an entry with
        # metadata marks the post-hooks' turn.
        stack: list = [(self, prefix, None)]
        while stack:
            module, module_prefix, finished = stack.pop()
            if module is not self and type(module).state_dict is not _ModuleStateDict.state_dict:
                # A submodule with its own state_dict is asked for its entries, as PyTorch's recursion does.
                module.state_dict(destination=destination, prefix=module_prefix, keep_vars=keep_vars)
                continue
            if finished is not None:
                for hook in module._state_dict_hooks.values():
                    hook(module, destination, module_prefix, finished)
                continue
            local_metadata = {"version": module._version}
            if hasattr(destination, "_metadata"):
                destination._metadata[module_prefix[:-1]] = local_metadata
            for hook in module._state_dict_pre_hooks.values():
                hook(module, module_prefix, keep_vars)
            module._save_to_state_dict(destination, module_prefix, keep_vars)
            stack.append((module, module_prefix, local_metadata))
            stack.extend(reversed([(child, module_prefix + name + ".", None)
                                   for name, child in module._modules.items() if child is not None]))
        return destination

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list, unexpected_keys: list, error_msgs: list) -> None:
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in (*self._parameters.items(), *persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not is_tensor_like(input_param):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                  f"Tensor-like object from checkpoint but received {type(input_param)}")
                continue
            # Backward compatibility with checkpoints that stored scalars as one-element vectors.
            if len(param.shape) == 0 and len(input_param.shape) == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {input_param.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with tm.no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param, requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as error:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {input_param.size()}, "
                                  f"an exception occurred : {error.args}.")
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not _ModuleStateDict.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` into this module and its descendants.

        With ``strict=True`` the keys must match ``state_dict()``'s exactly;
        returns a named tuple ``(missing_keys, unexpected_keys)``. Errors are
        collected and raised together as a ``RuntimeError``. ``assign=True``
        assigns the given tensors instead of copying into the existing ones.
        When every key carries an extra (or lacks a) ``module.`` prefix — a
        checkpoint saved from a wrapper — the error says so.

        >>> import tensormodes as tm
        >>> a, b = tm.nn.Linear(2, 2), tm.nn.Linear(2, 2)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> b.load_state_dict({"weight": a.weight}, strict=False)
        _IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        # An explicit walk (deep module chains); as in PyTorch, a module's post-hooks run once its subtree
        # has loaded: an entry with done=True marks their turn.
        stack: list = [(self, state_dict, "", False)]
        while stack:
            module, local_state_dict, prefix, done = stack.pop()
            if done:
                for hook in module._load_state_dict_post_hooks.values():
                    if hook(module, incompatible) is not None:
                        raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are "
                                             "not expected to return new values, if incompatible_keys need to be "
                                             "modified, it should be done inplace.")
                continue
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing_keys,
                                         unexpected_keys, error_msgs)
            stack.append((module, None, prefix, True))
            children = []
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    children.append((child, {k: v for k, v in local_state_dict.items()
                                             if k.startswith(child_prefix)}, child_prefix, False))
            stack.extend(reversed(children))
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
            hint = _prefix_hint(missing_keys, unexpected_keys)
            if hint:
                error_msgs.append(hint)
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)


def _prefix_hint(missing: list[str], unexpected: list[str]) -> str:
    """A hint when the keys differ only by a wrapper's ``module.`` prefix (tensormodes' addition)."""
    if not missing or not unexpected or len(missing) != len(unexpected):
        return ""
    if all(k.startswith("module.") for k in unexpected) and \
            sorted(k[len("module."):] for k in unexpected) == sorted(missing):
        return ('Hint: every unexpected key is a missing key with an extra "module." prefix (a checkpoint saved '
                'from a wrapped model); strip it, e.g. {k.removeprefix("module."): v for k, v in '
                "state_dict.items()}.")
    if all(k.startswith("module.") for k in missing) and \
            sorted(k[len("module."):] for k in missing) == sorted(unexpected):
        return ('Hint: every missing key is an unexpected key with a "module." prefix added (the model is '
                'wrapped); add it, e.g. {"module." + k: v for k, v in state_dict.items()}, or load into the '
                "wrapped module.")
    return ""
