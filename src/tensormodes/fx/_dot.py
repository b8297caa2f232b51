"""Graphviz DOT text for a graph: no dependency (the ``dot`` executable only turns it into
SVG or PNG). Labels are DOT string literals with every quote and backslash escaped, so
no node name, target or constant can break the file."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["graph_to_dot"]

_COLORS = {"placeholder": "#d8ecf3", "get_attr": "#f3ecd8", "call_function": "#e8e8e8",
           "call_method": "#e0f0e0", "call_module": "#f0e0f0", "output": "#d8ecf3"}


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\l")
    return f'"{escaped}"'


def _describe_meta(meta) -> str | None:
    tensor_meta = meta.get("tensor_meta")
    if tensor_meta is None:
        return None
    items = tensor_meta if isinstance(tensor_meta, (tuple, list)) and not hasattr(tensor_meta, "shape") else [
        tensor_meta]
    parts = []
    for item in items:
        shape = getattr(item, "shape", None)
        if shape is not None:
            parts.append(f"{list(shape)} {item.dtype}")
    return "; ".join(parts) or None


def graph_to_dot(nodes: Iterable, name: str = "graph") -> str:
    """DOT text with one box per node (name, op, target, and shape/dtype when known)."""
    nodes = list(nodes)
    ids = {node: f"n{i}" for i, node in enumerate(nodes)}
    lines = [f"digraph {_quote(name)} {{", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for node in nodes:
        label = [node.name, f"op: {node.op}", f"target: {node._pretty_target()}"]
        described = _describe_meta(node.meta)
        if described:
            label.append(described)
        text = "\n".join(label) + "\n"
        lines.append(f"  {ids[node]} [label={_quote(text)}, fillcolor={_quote(_COLORS[node.op])}];")
    for node in nodes:
        for used in node.all_input_nodes:
            if used in ids:
                lines.append(f"  {ids[used]} -> {ids[node]};")
    lines.append("}")
    return "\n".join(lines) + "\n"
