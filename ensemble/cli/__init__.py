"""The ``otreebagger`` command line: demo, evaluate, fit, predict and audit.

The top floor: it may import every other sub-package, and nothing imports it.
``python -m ensemble.cli`` runs it as the ``otreebagger`` script does.
"""
