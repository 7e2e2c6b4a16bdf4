"""Compiler layer: IR → facts and IR → IR passes, between the frontends and the backends.

Pure functions over the frozen IR (``toolbind.compiler.ir``); a pass never imports a frontend or a
backend. ``graph``: definition dependency groups and base-class order; ``unions``: what a union's
variants have in common or keep apart (tagged unions, mutual exclusion), which nodes are classes.
"""
