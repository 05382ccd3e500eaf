"""``python -m tcpdsl``: the same as the ``tcpdsl`` command."""

from tcpdsl.cli.main import main

raise SystemExit(main())
