from oryxtui.cli import main

raise SystemExit(main())
