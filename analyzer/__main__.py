"""``python -m analyzer`` runs the sgtrace command line."""

import sys

from .cli import main

sys.exit(main())
