"""Compiler layer: the memo layer, the one place a run reuses what a previous run made.

Imports ``_load``, ``_cachedir``, ``_steps``, ``_tree``, ``_write`` (the output's layout),
``_version``, ``diagnostics``, ``ir`` and, when a spec is read, the OpenAPI reader's types (the
layer may know a stage's insides; no stage knows the layer); only the driver imports it.

The stages are functions of their inputs alone. Those with costly sub-steps name them through
one neutral seam, ``_steps.Steps`` (a YAML file's parse, a keyed output file, a keyed result,
an output file written beside a result, a part of a document with the places it reads), whose
own methods make every step; this package's subclasses of it (``RenderSteps``, ``ReadSteps``)
are the other implementation, built from the previous output.
The stages take a ``steps`` argument and never learn which one they were given.

Modules, from the outside in:

* ``_layer``: ``Memo``, the reuse decisions of one run, and the one keying scheme
  (toolbind's version and options, with the digests of each stage's inputs);
* ``_render``: ``RenderSteps``, the render stage's steps (files not made again when their key
  is the previous output's, whole-package results read back by key);
* ``_replay`` and ``_records``: ``ReadSteps``, the read stage's steps (a large YAML file parsed
  again from its kept parse, each OpenAPI operation lowered or taken from its record,
  ``Replay``), and the records themselves;
* ``_operations``: the records kept between runs, and what an edit changed;
* ``_outputs``: the previous output directory — its manifest (``Previous``), its files
  (``_tree.Kept``: read only when asked for), and the file signatures that spare reading them;
* ``_parses`` and ``_reparse``: large YAML specs' parses, an edited one parsed again from
  the one entry the edit is in.

What is kept between runs lives in the output's ``.toolbind-cache/`` (``PARSES``), in its
manifest's ``incremental`` section, and in the user's cache directory (``_cachedir``: the
signatures); nothing kept is ever needed — anything missing or stale means the step runs.
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
