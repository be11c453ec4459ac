from edgechat.cli import main

raise SystemExit(main())
