"""Compiler layer: every family of normalising rules, in one list (``table()`` reads it).

A new family is a module of this package exporting ``RULES``, added here."""

from __future__ import annotations

from typing import Any

from ._rule import Rule

ALL: tuple[Rule[Any], ...] = ()
