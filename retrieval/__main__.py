from elquery.retrieval.cli import main

raise SystemExit(main())
