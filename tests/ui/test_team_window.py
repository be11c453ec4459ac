"""The window on a team library (chroma://HOST:PORT/NAME), against a real `chroma run` server on
loopback: it shows the library's documents and answers from them, Library › Open a team
library… checks the address and its server before anything changes, and the window switches
between a team library and the user's own."""

from __future__ import annotations

from pathlib import Path

import shiboken6

from edgechat.core.answering.extractive import ExtractiveClient
from edgechat.core.engine import ClientChoice, Engine, Identity
from edgechat.ui.app import Launcher, resolve_library
from edgechat.ui.single_instance import library_key, server_name
from tests.chroma_server import ChromaServer
from tests.helpers import make_corpus
from tests.llama_server import free_port
from tests.ui.test_mainwindow import ask, indexed_paths

ALICE = Identity("alice", frozenset({"staff"}))  # indexes the team library
BOB = Identity("bob")  # a desktop that indexed nothing: reads it from the server alone


def _team_library(tmp_path: Path, embedder, chroma_server: ChromaServer) -> tuple[str, Path]:
    docs = make_corpus(tmp_path / "docs")
    url = chroma_server.library()
    with Engine(url, embedder=embedder, identity=ALICE) as engine:
        assert len(engine.index([docs]).indexed) == 3
    return url, docs


def test_window_opened_on_a_team_library_shows_its_documents_and_answers_from_them(
        tmp_path: Path, embedder, chroma_server: ChromaServer, make_window, qtbot):
    url, docs = _team_library(tmp_path, embedder, chroma_server)
    w = make_window(url, identity=BOB)
    team = w.team
    assert team is not None and w.library == url
    assert team.name in w.windowTitle() and "127.0.0.1" in w.windowTitle()
    # The documents, under the folder they were indexed from on the other desktop.
    files = {str(p) for p in docs.rglob("*") if p.is_file()}
    assert indexed_paths(w) == files
    assert w.library_panel.model.roots() == [str(docs)]
    assert "3 documents in team library" in w.library_label.text()
    assert "go to that server" in w.library_label.toolTip() and team.server in w.library_label.toolTip()
    # Another desktop's folder is not watched or re-scanned here, nor removed from here.
    assert w.watcher.watched() == [] and w._own_roots == []
    w.remove_roots([str(docs)], confirm=False)
    assert "indexed on another computer" in w.statusBar().currentMessage()
    assert w.workers.pending() == 0

    turn = ask(qtbot, w, "How hot is the surface of Venus?")
    assert turn.sources, turn.answer
    assert Path(turn.sources[0]["path"]).name == "solar-system.md"
    assert all(str(s["path"]).startswith(str(docs)) for s in turn.sources)
    assert "Venus" in turn.answer and "[1]" in turn.answer
    # The chat is kept in this desktop's copy of the team library.
    qtbot.waitUntil(lambda: w.chat_list.model.rowCount() == 1, timeout=10000)
    # The list follows the server: a file another desktop indexes shows up at the next listing.
    (docs / "kitchen" / "cheese.md").write_text("# Cheese\n\nHard cheese ages for months in a cool cellar.\n")
    with Engine(url, embedder=embedder, identity=ALICE) as engine:
        engine.index([docs])
    cheese = str(docs / "kitchen" / "cheese.md")
    for _ in range(30):  # (a listing pulls from the server at most every team.PULL_EVERY_S)
        w.list_team_library()
        qtbot.wait(1000)
        if cheese in indexed_paths(w):
            break
    assert cheese in indexed_paths(w)


def test_a_bad_address_or_a_silent_server_changes_nothing(tmp_path: Path, embedder, chroma_server: ChromaServer,
                                                        make_window, qtbot):
    w = make_window()
    asked: list = []
    w.sig_open_library.connect(asked.append)
    dialog = w.open_team_library()
    assert dialog.isVisible()
    for bad, says in (("chroma://host/lib", "chroma://HOST:PORT/NAME"), ("chroma://host:99999/lib", "no such port"),
                      ("chroma://host:80/x y", "3-62 letters"), ("", "chroma://HOST:PORT/NAME")):
        dialog.edit.setText(bad)
        dialog.try_open()
        assert says in dialog.error.text() and "\n" not in dialog.error.text()
        assert dialog.isVisible() and not asked
    # A port where no Chroma server answers.
    dialog.edit.setText(f"chroma://127.0.0.1:{free_port('127.0.0.1')}/handbooks")
    dialog.try_open()
    qtbot.waitUntil(lambda: "No Chroma server answers" in dialog.error.text(), timeout=15000)
    assert "is it running" in dialog.error.text() and "\n" not in dialog.error.text()
    assert dialog.isVisible() and not asked
    assert w.team is None and w.library == tmp_path / "library" and w.engine_ready
    # A server that answers but holds no such library yet: said, and Open again creates it.
    fresh = chroma_server.library()
    dialog.edit.setText(fresh)
    dialog.try_open()
    qtbot.waitUntil(lambda: "holds no team library" in dialog.error.text(), timeout=15000)
    assert not asked
    dialog.try_open()
    assert asked == [fresh] and not dialog.isVisible()


def test_the_dialog_opens_an_existing_team_library(tmp_path: Path, embedder, chroma_server: ChromaServer,
                                                   make_window, qtbot):
    url, _docs = _team_library(tmp_path, embedder, chroma_server)
    w = make_window()
    asked: list = []
    w.sig_open_library.connect(asked.append)
    dialog = w.open_team_library()
    dialog.edit.setText(url.removeprefix("chroma://"))  # the scheme may be left out
    dialog.try_open()
    qtbot.waitUntil(lambda: bool(asked), timeout=15000)
    assert asked == [url]
    assert w.qsettings.value("library/teamAddress") == url  # offered the next time
    assert w.open_team_library().edit.text() == url


def test_the_window_switches_to_a_team_library_and_back(tmp_path: Path, embedder, chroma_server: ChromaServer,
                                                        qtbot, settings_file, monkeypatch):
    from edgechat.ui.mainwindow import MainWindow

    url, docs = _team_library(tmp_path, embedder, chroma_server)
    own = tmp_path / "own"
    monkeypatch.setenv("EDGECHAT_LIBRARY", str(own))
    made: list[MainWindow] = []

    def window(library):
        w = MainWindow(library, qsettings=settings_file,
                       engine_factory=lambda status: Engine(library, embedder=embedder, identity=BOB),
                       client_factory=lambda engine, setting: ClientChoice(ExtractiveClient(), ""))
        made.append(w)
        return w

    launcher = Launcher(window)
    try:
        first = launcher.open(resolve_library(None))
        assert first is not None and first.library == own and first.team is None
        qtbot.waitUntil(lambda: first.engine_ready, timeout=30000)
        assert not first.act_open_own.isEnabled()
        first.open_library(url)  # as the dialog does once the server answered
        second = launcher.window
        assert second is not None and second is not first and second.team is not None
        qtbot.waitUntil(lambda: second.engine_ready, timeout=30000)
        qtbot.waitUntil(lambda: not shiboken6.isValid(first) or not first.isVisible(), timeout=30000)
        qtbot.waitUntil(lambda: bool(indexed_paths(second)), timeout=30000)
        assert str(docs / "garden.txt") in indexed_paths(second)
        assert launcher.server is not None and launcher.server.name == server_name(url)
        # The same library again: said, nothing reopened.
        second.open_library(url)
        assert launcher.window is second and "is the library open" in second.statusBar().currentMessage()
        assert second.act_open_own.isEnabled()
        second.open_own_library()
        third = launcher.window
        assert third is not None and third is not second and third.library == own
        qtbot.waitUntil(lambda: third.engine_ready, timeout=30000)
    finally:
        for w in made:
            if shiboken6.isValid(w) and w.workers.running:
                w.close()
        launcher.close()


def test_an_address_is_never_a_path(tmp_path: Path, monkeypatch):
    assert resolve_library("chroma://127.0.0.1:8000/handbooks") == "chroma://127.0.0.1:8000/handbooks"
    assert resolve_library(Path("chroma://127.0.0.1:8000/handbooks")) == "chroma://127.0.0.1:8000/handbooks"
    monkeypatch.setenv("EDGECHAT_LIBRARY", "chroma://10.0.0.5:8000/handbooks")
    assert resolve_library(None) == "chroma://10.0.0.5:8000/handbooks"
    assert resolve_library(tmp_path) == tmp_path
    assert library_key("chroma://10.0.0.5:8000/handbooks") == "chroma://10.0.0.5:8000/handbooks"
    assert server_name("chroma://10.0.0.5:8000/handbooks") != server_name("chroma://10.0.0.5:8000/other")
    assert server_name(tmp_path / "a") == server_name(str(tmp_path / "a" / "." ))


def test_folders_added_from_the_window_can_be_restricted(tmp_path: Path, embedder, chroma_server: ChromaServer,
                                                         make_window, qtbot):
    """Add folder… into a team library asks who may read it; a folder restricted from the window
    is searched by its readers and by no one else."""
    from edgechat.core.engine import TeamAddress
    from edgechat.ui.team_dialog import TeamAddDialog
    from tests.helpers import write

    team = TeamAddress.parse(chroma_server.library())
    assert team is not None
    dialog = TeamAddDialog(team, ["/srv/share/payroll"])
    qtbot.addWidget(dialog)
    assert dialog.readers() is None  # left empty: what was set before (everyone, for a new folder)
    dialog.edit.setText(" bob,  @finance,alice, ")
    assert dialog.readers() == "alice,bob,@finance"
    assert dialog.edit.accessibleName() and dialog.index_button.isDefault()
    dialog.show()
    dialog.grab().save(str(tmp_path / "team-add-dialog.png"))  # (looked at while writing this)

    url = str(team)
    w = make_window(url, identity=ALICE)
    payroll = tmp_path / "payroll"
    write(payroll / "salaries.md", "# Salaries\n\nThe night shift bonus is 14 percent of the base salary.\n")
    assert w.add_paths([str(payroll)], confirm=False, readers="alice,@finance") == [str(payroll)]
    qtbot.waitUntil(lambda: str(payroll / "salaries.md") in indexed_paths(w), timeout=60000)
    for who, sees in ((Identity("carol", frozenset({"finance"})), True), (BOB, False)):
        with Engine(url, embedder=embedder, identity=who, readonly=True) as reader:
            found = reader.search("night shift bonus", k=5).sources
            assert bool(found) == sees, who
