"""The app's own arrangement: the core in an engine process, the window in this one."""

from __future__ import annotations

import os
import signal

from PySide6.QtCore import QSettings

from edgechat.ui.settings import AppSettings
from tests.helpers import make_corpus
from tests.ui.pdfmaker import make_pdf
from tests.ui.test_mainwindow import LIGHTHOUSE, ask, click_chip, drop, indexed_paths


def _window(qtbot, tmp_path):
    from edgechat.ui.mainwindow import MainWindow
    from edgechat.ui.workers import EngineProcess

    qs = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    AppSettings(model="extractive").save(qs)  # no language model needed here
    w = MainWindow(tmp_path / "library", qsettings=qs)
    qtbot.addWidget(w)
    w.show()
    assert isinstance(w.workers, EngineProcess)
    qtbot.waitUntil(lambda: w.engine_ready, timeout=60000)
    return w


def test_engine_process_indexes_answers_and_shows_passages(qtbot, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    make_pdf(docs / "lighthouse.pdf", [["A first page about harbours and the sea and the trade."], LIGHTHOUSE])
    w = _window(qtbot, tmp_path)
    try:
        drop(w, [docs])
        qtbot.waitUntil(lambda: len(indexed_paths(w)) == 4, timeout=60000)
        turn = ask(qtbot, w, "When did the lighthouse keeper light the lamp?")
        assert turn.grounded and turn.cited_numbers
        src = next(s for s in turn.sources if s["ordinal"] == turn.cited_numbers[0])
        assert src["path"].endswith("lighthouse.pdf") and src["page"] == 2
        click_chip(qtbot, w, 0, turn.cited_numbers[0])
        viewer = w.sources.viewer
        qtbot.waitUntil(lambda: viewer.current_kind() == "pdf" and bool(viewer.pdf_view.view.highlight_rects()),
                        timeout=20000)
        assert viewer.pdf_view.view.highlight_page == 1
        turn = ask(qtbot, w, "How hot is the surface of Venus?")
        n = turn.cited_numbers[0]
        click_chip(qtbot, w, 1, n)
        qtbot.waitUntil(lambda: viewer.current_kind() == "text" and viewer.text_view.highlighted_text() != "",
                        timeout=20000)
        # The highlight is the source sentence the answer quotes there, inside the cited passage.
        shown = " ".join(viewer.text_view.highlighted_text().split())
        assert shown and shown in " ".join(turn.answer.split())
    finally:
        w.close()
    assert not w.workers.running
    assert w.workers.process.exitcode == 0


def test_a_dead_engine_process_is_restarted(qtbot, tmp_path):
    docs = make_corpus(tmp_path / "docs")
    w = _window(qtbot, tmp_path)
    try:
        w.add_paths([str(docs)])
        qtbot.waitUntil(lambda: len(indexed_paths(w)) == 3, timeout=60000)
        old = w.workers.process.pid
        os.kill(old, signal.SIGKILL)
        qtbot.waitUntil(lambda: w.engine_ready and w.workers.process.pid != old, timeout=60000)
        turn = ask(qtbot, w, "How hot is the surface of Venus?")
        assert turn.grounded
    finally:
        w.close()
    assert not w.workers.running


def test_killing_the_engine_process_mid_index_loses_nothing(qtbot, tmp_path):
    """The app's own engine process killed while it indexes (a crash, the OOM killer): the
    restarted one recovers the library and finishes the job; every file ends indexed once."""
    from edgechat.core.engine import Engine
    from tests.core.test_indexing import consistent
    from tests.helpers import write

    docs = tmp_path / "many"
    for i in range(40):
        write(docs / f"note{i:03d}.txt", f"Note number {i} is about topic {i % 7}. " * 40)
    w = _window(qtbot, tmp_path)
    try:
        w.add_paths([str(docs)])
        qtbot.waitUntil(lambda: 3 <= len(indexed_paths(w)), timeout=120000)
        old = w.workers.process.pid
        os.kill(old, signal.SIGKILL)
        qtbot.waitUntil(lambda: w.engine_ready and w.workers.process.pid != old, timeout=60000)
        w.add_paths([str(docs)])  # what the watcher or the start-up refresh does
        qtbot.waitUntil(lambda: len(indexed_paths(w)) == 40, timeout=300000)
    finally:
        w.close()
    with Engine(tmp_path / "library", readonly=True) as e:
        assert e.counts().files_indexed == 40
        consistent(e.parts.store)
