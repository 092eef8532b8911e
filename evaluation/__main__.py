"""``python -m evaluation``: the evaluation command line."""

from evaluation.cli import main

raise SystemExit(main())
