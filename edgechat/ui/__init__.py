"""EdgeChat's desktop app (PySide6) over edgechat.core. Entry point: edgechat.ui.app.run_app.

Importing this package imports no Qt: the engine process (edgechat.service.host) runs
edgechat.service.runners and the core only."""
