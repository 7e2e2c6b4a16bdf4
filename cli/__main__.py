"""CLI layer: ``python -m toolbind.cli`` runs the ``toolbind`` command. Imports ``main`` only."""

from toolbind.cli import main

main()
