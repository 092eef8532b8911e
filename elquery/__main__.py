from elquery.cli import main

raise SystemExit(main())
