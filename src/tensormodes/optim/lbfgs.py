"""``LBFGS``: limited-memory BFGS, optionally with a strong-Wolfe line search.

The algorithm is PyTorch's (itself after minFunc), step for step: the same tensor
operations on the flattened gradient, the same mixture of Python numbers and 0-dim
tensors (``t``, ``ro``, ``H_diag`` become tensors as they do in PyTorch), so the
iterates agree with PyTorch's to rounding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .._api import namespace as tm
from .optimizer import Optimizer, _check_float_lr

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through ``(x1, f1, g1)`` and ``(x2, f2, g2)``, clamped to
    ``bounds`` (the interval's ends by default); the bounds' midpoint if there is none."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _contiguous_copy(t):
    """A copy of ``t`` (PyTorch asks for ``contiguous_format``: the copies here are of flat
    gradients and of parameters, which clone's default keeps in the same layout)."""
    return t.clone()


def _bracket_phase(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls):
    """Step forward until an interval holding a point that satisfies the strong Wolfe
    conditions is found (or such a point itself): returns the search's state."""
    f_new, g_new = obj_func(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = bracket_f = bracket_g = bracket_gtd = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, _contiguous_copy(g_new)], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, _contiguous_copy(g_new)], [gtd_prev, gtd_new]
            break
        # extrapolate, within [t + 0.01 (t - t_prev), 10 t]
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, _contiguous_copy(g_new), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    return {"bracket": bracket, "f": bracket_f, "g": bracket_g, "gtd": bracket_gtd, "done": done,
            "ls_iter": ls_iter, "evals": evals}


def _zoom_phase(obj_func, x, d, f, gtd, c1, c2, tolerance_change, max_ls, search, d_norm):
    """Shrink the bracket by cubic interpolation until a point satisfies the strong Wolfe
    conditions (or the bracket is too small, or evaluations run out)."""
    bracket, bracket_f, bracket_g, bracket_gtd = search["bracket"], search["f"], search["g"], search["gtd"]
    done, ls_iter = search["done"], search["ls_iter"]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # A point too close to an end of the bracket makes little progress: move it inwards
        # (the second time in a row, or when it falls outside).
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        search["evals"] += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = _contiguous_copy(g_new), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = _contiguous_copy(g_new), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos]


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """PyTorch's strong-Wolfe line search along ``d`` from step ``t``: returns
    ``(loss, flat gradient, step, function evaluations)``."""
    d_norm = d.abs().max()
    g = _contiguous_copy(g)
    search = _bracket_phase(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls)
    f_new, g_new, t = _zoom_phase(obj_func, x, d, f, gtd, c1, c2, tolerance_change, max_ls, search, d_norm)
    return f_new, g_new, t, search["evals"]


class LBFGS(Optimizer):
    """Implements the L-BFGS algorithm (after minFunc).

    It supports a single parameter group (no per-parameter options), and ``step`` needs a
    ``closure`` that clears the gradients, computes the loss, calls ``backward`` and
    returns the loss: one ``step`` runs up to ``max_iter`` iterations.

    Args:
        params (iterable): iterable of parameters to optimize. Parameters must be real.
        lr (float, optional): learning rate (default: 1)
        max_iter (int, optional): maximal number of iterations per optimization step
            (default: 20)
        max_eval (int, optional): maximal number of function evaluations per optimization
            step (default: max_iter * 1.25).
        tolerance_grad (float, optional): termination tolerance on first order optimality
            (default: 1e-7).
        tolerance_change (float, optional): termination tolerance on function
            value/parameter changes (default: 1e-9).
        history_size (int, optional): update history size (default: 100).
        line_search_fn (str, optional): either 'strong_wolfe' or None (default: None).

    The state (of the first parameter, as in PyTorch) holds ``func_evals``, ``n_iter``,
    the last direction ``d`` and step ``t``, the curvature pairs ``old_dirs``/``old_stps``
    with ``ro`` and ``al``, ``H_diag``, ``prev_flat_grad`` and ``prev_loss``.

    >>> import tensormodes as tm
    >>> w = tm.nn.Parameter(tm.tensor([1.5, -0.5]))
    >>> opt = tm.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - tm.tensor([3.0, 2.0])) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> opt.step(closure)
    tensor(8.5000, grad_fn=<SumBackward0>)
    >>> w
    Parameter containing:
    tensor([3., 2.], requires_grad=True)
    """

    def __init__(self, params: Iterable, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        _check_float_lr(lr)
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval, "tolerance_grad": tolerance_grad,
                    "tolerance_change": tolerance_change, "history_size": history_size,
                    "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(2 * p.numel() if tm.is_complex(p) else p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        views = []
        for p in self._params:
            view = p.new_zeros((p.numel(),)) if p.grad is None else p.grad.view(-1)
            if tm.is_complex(view):
                view = tm.view_as_real(view).view(-1)
            views.append(view)
        return tm.cat(views, 0)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            if tm.is_complex(p):
                p = tm.view_as_real(p)
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
            offset += numel
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self) -> list:
        return [_contiguous_copy(p) for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, pdata in zip(self._params, params_data, strict=True):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at ``x + t d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Perform a single optimization step (up to ``max_iter`` iterations); ``closure``
        re-evaluates the model and returns the loss. Returns the loss of the first evaluation.

        >>> import tensormodes as tm
        >>> w = tm.nn.Parameter(tm.tensor([0.0]))
        >>> opt = tm.optim.LBFGS([w], max_iter=1)
        >>> def closure():
        ...     opt.zero_grad(); loss = ((w - 1.0) ** 2).sum(); loss.backward(); return loss
        >>> opt.step(closure).item(), w.item()
        (1.0, 1.0)
        """
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}")
        def closure_with_grad():
            with tm.enable_grad():
                return closure()

        with tm.no_grad():
            return self._run(closure_with_grad)

    def _direction(self, state, group, flat_grad, memory):
        """The next search direction: ``-H g`` by the two-loop recursion over the stored
        curvature pairs (updated first with the last step's pair if its curvature is positive)."""
        if state["n_iter"] == 1:
            memory.update(old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return flat_grad.neg()
        old_dirs, old_stps, ro = memory["old_dirs"], memory["old_stps"], memory["ro"]
        y = flat_grad.sub(memory["prev_flat_grad"])
        s = memory["d"].mul(memory["t"])
        ys = y.dot(s)
        if ys > 1e-10:
            if len(old_dirs) == group["history_size"]:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            memory["H_diag"] = ys / y.dot(y)
        num_old = len(old_dirs)
        if "al" not in state:
            state["al"] = [None] * group["history_size"]
        al = state["al"]
        q = flat_grad.neg()
        for i in range(num_old - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        d = r = tm.mul(q, memory["H_diag"])
        for i in range(num_old):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return d

    # long: PyTorch's iteration loop with its five stopping tests, kept in one piece to read against it
    def _run(self, closure) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn = group["line_search_fn"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss
        memory = {key: state.get(key) for key in ("d", "t", "old_dirs", "old_stps", "ro", "H_diag",
                                                  "prev_flat_grad", "prev_loss")}
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            d = memory["d"] = self._direction(state, group, flat_grad, memory)
            if memory["prev_flat_grad"] is None:
                memory["prev_flat_grad"] = _contiguous_copy(flat_grad)
            else:
                memory["prev_flat_grad"].copy_(flat_grad)
            memory["prev_loss"] = loss
            # the first step is scaled by the gradient, then the step is lr
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                memory["t"] = t
                break
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, t, d: self._directional_evaluate(closure, x, t, d), x_init, t, d, loss, flat_grad,
                    gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                ls_func_evals = 0
                if n_iter != max_iter:
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            memory["t"] = t
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if (n_iter == max_iter or current_evals >= max_eval or opt_cond
                    or d.mul(t).abs().max() <= tolerance_change or abs(loss - memory["prev_loss"]) < tolerance_change):
                break
        state.update(memory)
        return orig_loss
