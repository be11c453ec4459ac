"""EdgeChat's desktop app (PySide6) over edgechat.core. Entry point: edgechat.ui.app.run_app."""

from edgechat.ui.qtfix import guard as _guard_refcounts

# Before any widget, model or signal of the app exists (see qtfix for why).
_guard_refcounts()
