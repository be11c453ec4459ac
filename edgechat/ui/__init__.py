"""EdgeChat's desktop app (PySide6) over edgechat.core. Entry point: edgechat.ui.app.run_app.

Importing this package imports no Qt: the engine process (edgechat.ui.engine_process) runs
edgechat.ui.jobs and the core only."""
