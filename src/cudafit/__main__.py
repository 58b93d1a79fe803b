"""``python -m cudafit``."""

import sys

from cudafit.cli import main

sys.exit(main())
