from kg_neo4j.cli import main

raise SystemExit(main())
