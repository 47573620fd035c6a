#!/usr/bin/python3
"""The installed `cuvil` command (cuvil compile, profile, trace, package)."""

import sys

from cuvil.cli import main

sys.exit(main())
