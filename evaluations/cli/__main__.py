"""``python -m evaluations.cli``: the ``kverdict`` command."""

import sys

from evaluations.cli import main

sys.exit(main())
