"""``python -m elquery.linking``: the ``link`` command on its own."""

from elquery.linking.cli import main

raise SystemExit(main())
