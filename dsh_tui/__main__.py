"""`python -m dsh_tui`: the same as the `dsh-tui` command."""

import sys

from dsh_tui.cli import main

sys.exit(main())
