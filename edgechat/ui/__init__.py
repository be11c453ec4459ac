"""EdgeChat's desktop app (PySide6) over edgechat.core. Entry point: edgechat.ui.app.run_app."""
