"""``python -m cuvil``: the Cuvil command line (see :mod:`cuvil.cli`)."""

import sys

from .cli import main

sys.exit(main())
