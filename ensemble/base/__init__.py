"""What every ensemble shares: the base estimator, compiled loops over tree structures, votes and cut points.

Also joblib jobs with a progress bar and the docstring fragments the estimators share.
The lowest floor of ``ensemble``: it imports ``trees`` and ``relabel`` only, and every
other sub-package may import it (docs/design.md section 1).
"""
