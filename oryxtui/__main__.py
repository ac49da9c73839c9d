from oryxtui.launch import main

raise SystemExit(main())
