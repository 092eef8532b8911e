from elquery.indexing.cli import main

raise SystemExit(main())
