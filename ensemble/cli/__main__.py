"""``python -m ensemble.cli``: the ``otreebagger`` command line."""

import sys

from ensemble.cli._main import run

sys.exit(run())
