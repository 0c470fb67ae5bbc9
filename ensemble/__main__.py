"""``python -m ensemble``: the ``otreebagger`` command line, as ``python -m ensemble.cli`` runs it."""

import sys

from ensemble.cli._main import run

sys.exit(run())
