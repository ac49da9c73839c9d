"""`python -m oryxtui`: the same program as the `oryxtui` executable."""

from oryxtui.launch import main

raise SystemExit(main())
