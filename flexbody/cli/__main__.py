"""``python -m flexbody.cli``: the ``flexbody`` command."""

import sys

from .app import main

sys.exit(main())
