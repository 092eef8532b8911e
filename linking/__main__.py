"""``python -m linking``: the ``link`` command on its own."""

from linking.cli import main

raise SystemExit(main())
