"""Compiler layer (passes): graph analyses the backends need. Standard library only.

``strongly_connected`` finds the groups of definitions that refer to each other (a group is
emitted together, after what it depends on); ``order_by_bases`` puts every base class before its
subclasses.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def strongly_connected(nodes: list[str], edges: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), dependencies before dependents;
    members keep the order of ``nodes``."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    position = {n: i for i, n in enumerate(nodes)}
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges[node]
            if i < len(targets):
                work.append((node, i + 1))
                target = targets[i]
                if target not in index:
                    work.append((target, 0))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            if low[node] == index[node]:
                members: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                out.append(sorted(members, key=position.__getitem__))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


def order_by_bases(
    items: list[T], name: Callable[[T], str], bases: Callable[[T], Iterable[str]]
) -> list[T]:
    """``items`` in their order, except that a base always comes before the items that name it
    among their ``bases`` (``allOf`` inheritance may name a definition that sorts later)."""
    by_name = {name(c): c for c in items}
    placed: set[str] = set()
    visiting: set[str] = set()
    out: list[T] = []
    for start in items:
        stack: list[tuple[T, bool]] = [(start, False)]
        while stack:
            item, ready = stack.pop()
            key = name(item)
            if key in placed:
                continue
            if ready:
                placed.add(key)
                out.append(item)
                continue
            if key in visiting:
                continue
            visiting.add(key)
            stack.append((item, True))
            for base in reversed(list(bases(item))):
                parent = by_name.get(base)
                if parent is not None and base not in placed | visiting:
                    stack.append((parent, False))
    return out
