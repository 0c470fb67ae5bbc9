"""Model files: the skops archives ``otreebagger fit -o`` writes and ``load_model`` reads.

Public as ``ensemble.save_model`` and ``ensemble.load_model``. It knows every estimator
(the types a file may hold), so it sits above them; only the command line imports it.
"""
