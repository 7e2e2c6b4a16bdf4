"""Compiler layer: the memo layer, the one place a run reuses what a previous run made.

Imports ``_load``, ``_cachedir``, ``_tree``, ``_write`` (the output's layout), ``_version``,
``diagnostics``, ``ir`` and, when a spec is read, ``frontends._opmemo`` (the hook the OpenAPI reader offers); only the driver imports it.
No stage imports this package: each offers at most a hook (``_load.parsing_yaml``,
``frontends._opmemo.keeping_operations``, the backend's ``known``/``memo``/``previous``
arguments) that the layer fills around it.

Modules, from the outside in:

* ``_layer``: ``Memo``, the reuse decisions of one run, and the one keying scheme
  (toolbind's version and options, with the digests of each stage's inputs);
* ``_outputs``: the previous output directory — its manifest (``Previous``), its files
  (``_tree.Kept``: read only when asked for), and the file signatures that spare reading them;
* ``_parses`` and ``_reparse``: large YAML specs' parses, an edited one parsed again from
  the one entry the edit is in;
* ``_operations``: the OpenAPI operations' records, replayed by ``frontends._opmemo``.

What is kept between runs lives in the output's ``.toolbind-cache/`` (``PARSES``), in its
manifest's ``incremental`` section, and in the user's cache directory (``_cachedir``: the
signatures); nothing kept is ever needed — anything missing or stale means the stage runs.
"""

from ._layer import KeptReads, Memo, Package
from ._outputs import Reused, Signatures

record_signatures = Signatures.record
"""Keep how an output's files look now (``Signatures.record``), after it is written."""

__all__ = [
    "KeptReads",
    "Memo",
    "Package",
    "Reused",
    "record_signatures",
]
