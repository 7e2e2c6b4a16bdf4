"""Compiler layer: the seam through which a stage names its costly sub-steps (``Steps``).

Imports nothing of toolbind. A stage that has a costly sub-step declares it here: its name,
the key of everything its result is made from, and how to make it; whoever runs the stage
decides whether it is made. ``DIRECT`` makes every step (what a stage is given by default);
the memo layer (``memo``) subclasses ``Steps``, and a stage never learns which one it was
given. This is how build systems put it: the function declares its inputs' key, the engine
decides reuse.

The five kinds of step:

* ``parse``: a document parsed from a spec file's text (a large YAML file may be parsed again
  from an earlier parse of it);
* ``file``: a file of the output, made from a key (the render stage's modules);
* ``run``: a result made from a key, with how to write it as JSON values and read it back;
* ``output``: the text of an output file as written beside a ``run`` step's result, when that
  result was read back rather than made (its parts may then be copied, not made again);
* ``part``: one part of a document a reader lowers in order (an OpenAPI operation), with the
  places of the document it reads; the reader reports what else it read as it goes
  (``read_log``, ``ref_log``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

_T = TypeVar("_T")


class Steps:
    """How a stage's named steps are run: this class makes each one (``DIRECT``); the memo
    layer's subclasses decide otherwise (see the module docstring)."""

    def parse(
        self, name: str, text: str, make: Callable[[], _T], *, shown: str, dates: bool, size: int
    ) -> _T:
        """``make()``: the document in ``text`` (file ``name``, of ``size`` bytes, shown as
        ``shown``; ``dates``: unquoted YAML dates read as text), parsed as YAML; or the very
        same document got another way."""
        return make()

    def file(self, path: str, key: str) -> bool:
        """Whether the output file ``path``, made from ``key`` (a digest of everything its text
        is made from), is to be made now; False: the engine has it, made from that key."""
        return True

    def run(
        self,
        name: str,
        key: str,
        make: Callable[[], _T],
        save: Callable[[_T], dict[str, Any]],
        load: Callable[[dict[str, Any]], _T | None],
    ) -> _T:
        """The result of step ``name`` made from ``key``: ``make()``, or ``load`` of what
        ``save`` gave (JSON values) for a result of the same name and key. ``load`` checks
        what it reads and returns None when it is not whole (then ``make()``); either does
        what making the result does besides returning it."""
        return make()

    def output(self, path: str, step: str) -> str | None:
        """The text of output file ``path`` as written beside ``run`` step ``step``'s result,
        when that result was read back rather than made (None: it was made, or no such text)."""
        return None

    def part(
        self, reader: object, pointer: str, reads: Sequence[str] | None, make: Callable[[], _T]
    ) -> _T:
        """``make()``: the part at ``pointer`` of the document ``reader`` reads, which reads
        the places ``reads`` (JSON pointers) and what it reports as it goes (None: something
        no pointer of the document names)."""
        return make()


DIRECT = Steps()
"""The steps of a stage run on its own: each made."""
