"""``python -m elquery.evaluation``: the evaluation command line."""

from elquery.evaluation.cli import main

raise SystemExit(main())
