"""Screenshots of the app's main states, for a person to look at (not a test): the pictures in
README.md and docs/images/ are made by this script, never edited by hand.

    QT_QPA_PLATFORM=offscreen python benchmarks/screenshots.py [--corpus DIR] [--out DIR]

--out defaults to docs/images/.

Runs the real app (real Engine, embedder and, if one is installed, language model) on a
temporary library and saves PNGs with QWidget.grab(): first run, indexing, an answer with
chips and its text passage, a PDF passage outlined, problems, a stopped answer, settings, and
"show me where" for a sentence, and the answer again in a dark palette. --corpus adds a folder of real documents (for example the
Debian manuals) for the indexing and PDF shots."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, help="a folder of real documents (PDFs) to index as well")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    ap.add_argument("--question", default="How do I install a package from a .deb file?")
    args = ap.parse_args()

    from edgechat.core import paths

    os.environ.setdefault("EDGECHAT_MODELS", str(paths.models_dir()))
    home = Path(tempfile.mkdtemp(prefix="edgechat-shots-"))
    os.environ["EDGECHAT_HOME"] = str(home)
    args.out.mkdir(parents=True, exist_ok=True)

    from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
    from PySide6.QtGui import QColor, QDragEnterEvent, QDropEvent, QPalette
    from PySide6.QtWidgets import QApplication

    from tests.helpers import make_corpus
    from tests.ui.pdfmaker import make_pdf

    app = QApplication(sys.argv[:1])
    from benchmarks.common import pump
    from edgechat.ui.mainwindow import MainWindow

    docs = make_corpus(home / "docs")
    (docs / "scanned.pdf").write_bytes(b"%PDF-1.4\n% not really a PDF\n")
    make_pdf(docs / "lighthouse.pdf", [
        ["An introduction to coastal navigation and the history of harbours.",
         "Harbours were built where rivers meet the sea and trade could flourish."],
        ["The lighthouse keeper lit the great lamp at dusk every evening of the year.",
         "Ships kept away from the granite rocks because of the bright rotating beam.",
         "The keeper wound the clockwork that turned the lens every four hours at night."],
    ], title="Lighthouse Notes")

    def wait(cond, timeout: float = 120.0) -> bool:
        if pump(app, cond, timeout, poll=0.01):
            return True
        print("timed out waiting", file=sys.stderr)
        return False

    def shot(name: str, widget=None) -> None:
        for _ in range(5):
            app.processEvents()
            time.sleep(0.02)
        (widget or w).grab().save(str(args.out / f"{name}.png"))
        print(args.out / f"{name}.png")

    def idle() -> bool:
        return not w.workers.busy and w.workers.pending() == 0

    w = MainWindow(home / "library")
    w.resize(1400, 860)
    w.show()
    wait(lambda: w.engine_ready)
    wait(idle)
    shot("01-first-run")

    md = QMimeData()
    md.setUrls([QUrl.fromLocalFile(str(docs))] + ([QUrl.fromLocalFile(str(args.corpus))] if args.corpus else []))
    enter = QDragEnterEvent(QPointF(400, 300), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(w, enter)
    drop = QDropEvent(QPointF(400, 300), Qt.DropAction.CopyAction, md, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    QApplication.sendEvent(w, drop)
    if args.corpus:
        wait(lambda: w.library_panel.progress.last is not None and w.library_panel.progress.last.files_done >= 8, 300)
        shot("02-indexing")
    wait(idle, 1800)
    shot("03-indexed")

    def ask(question: str) -> None:
        w.chat.input.setPlainText(question)
        w.chat._submit()
        wait(lambda: not w.controller.answering, 300)

    ask("How hot is the surface of Venus?")
    turn = len(w.controller.turns) - 1
    if w.controller.turns[turn].cited_numbers:
        w.follow_citation(turn, w.controller.turns[turn].cited_numbers[0])
        wait(lambda: w.sources.viewer.current_kind() != "none", 30)
    shot("04-answer-text-passage")

    ask("When did the lighthouse keeper light the lamp?")
    turn = len(w.controller.turns) - 1
    if w.controller.turns[turn].cited_numbers:
        w.follow_citation(turn, w.controller.turns[turn].cited_numbers[0])
        wait(lambda: w.sources.viewer.current_kind() == "pdf", 30)
    shot("05-answer-pdf-passage")

    if args.corpus:
        ask(args.question)
        turn = len(w.controller.turns) - 1
        cited = w.controller.turns[turn].cited_numbers
        if cited:
            w.follow_citation(turn, cited[0])
        elif w.controller.turns[turn].sources:
            w.sources.select_number(int(w.controller.turns[turn].sources[0]["ordinal"]))
        wait(lambda: w.sources.viewer.current_kind() != "none", 30)
        shot("06-answer-real-pdf")
        # "Show me where" (F8): a sentence of the answer and the source sentence that says it.
        if w.chat.transcript.show_next_where(turn):
            wait(lambda: w.sources.viewer.current_kind() != "none", 30)
            shot("12-show-me-where")

    w.side.setCurrentWidget(w.library_panel)
    root = w.library_panel.model.index(0, 0)
    w.library_panel.tree.expand(root)
    shot("07-library-problems")

    w.controller.ask("Tell me about bread")
    w.controller.stop()
    shot("08-stopped")

    w.side.setCurrentWidget(w.chat_list)
    shot("09-chats")

    from edgechat.core.engine import installed_models
    from edgechat.ui.settings import SettingsDialog

    models, active = installed_models()
    dialog = SettingsDialog(w.settings, models, active, w)
    dialog.show()
    shot("10-settings", dialog)
    dialog.close()

    dark = QPalette()
    for role, color in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e6e6e6"),
                        (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.AlternateBase, "#2a2a2a"),
                        (QPalette.ColorRole.Text, "#e6e6e6"), (QPalette.ColorRole.Button, "#353535"),
                        (QPalette.ColorRole.ButtonText, "#e6e6e6"), (QPalette.ColorRole.Highlight, "#3d7be0"),
                        (QPalette.ColorRole.HighlightedText, "#ffffff"),
                        (QPalette.ColorRole.PlaceholderText, "#9a9a9a"), (QPalette.ColorRole.ToolTipBase, "#353535"),
                        (QPalette.ColorRole.ToolTipText, "#e6e6e6"), (QPalette.ColorRole.Dark, "#151515")):
        dark.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.WindowText, QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText):
        dark.setColor(QPalette.ColorGroup.Disabled, role, QColor("#6f6f6f"))
    app.setStyle("Fusion")
    app.setPalette(dark)
    w.side.setCurrentWidget(w.library_panel)
    w.controller.open_chat(w.controller.conversation.id)
    w.chat.transcript.render()
    shot("11-dark")

    w.close()
    shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
