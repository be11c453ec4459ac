"""The item models pass Qt's model tester through the updates the app makes to them."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from edgechat.core.conversations import ConversationInfo
from edgechat.core.records import FileState, LibraryFile
from edgechat.ui.models import ConversationListModel, LibraryModel, SourceListModel


def _f(path: str, root: str, state: str = "done", problem: str = "", chunks: int = 2) -> LibraryFile:
    return LibraryFile(path, root, FileState(state), problem=problem, format="text", pages=1, chunks=chunks)


def _rows(model: LibraryModel) -> list[tuple[str, list[str]]]:
    out = []
    for r in range(model.rowCount()):
        ri = model.index(r, 0)
        out.append((ri.data(LibraryModel.PathRole),
                    [model.index(i, 0, ri).data(LibraryModel.PathRole) for i in range(model.rowCount(ri))]))
    return out


def test_library_model_updates_in_place(qtmodeltester):
    model = LibraryModel()
    model.set_library(["/b"], [_f("/b/x.md", "/b")])
    # The tester stays connected: every update below is checked as it happens.
    qtmodeltester.check(model, force_py=True)
    model.set_library(["/a", "/b"], [_f("/a/1.txt", "/a"), _f("/a/3.txt", "/a"), _f("/b/x.md", "/b")])
    persistent = model.index(1, 0, model.index(0, 0))  # /a/3.txt
    from PySide6.QtCore import QPersistentModelIndex

    keep = QPersistentModelIndex(persistent)
    # Insert before and after, fail one, remove one: rows move without a reset.
    model.set_library(["/a", "/b"], [_f("/a/0.txt", "/a"), _f("/a/2.txt", "/a"), _f("/a/3.txt", "/a"),
                                     _f("/a/4.txt", "/a", "failed", "password required"), _f("/b/y.md", "/b")])
    assert _rows(model) == [("/a", ["/a/0.txt", "/a/2.txt", "/a/3.txt", "/a/4.txt"]), ("/b", ["/b/y.md"])]
    assert keep.isValid() and keep.data(LibraryModel.PathRole) == "/a/3.txt"
    failed = model.index(3, 1, model.index(0, 0))
    assert failed.data() == "password required"
    assert model.index(3, 0, model.index(0, 0)).data(LibraryModel.ProblemRole) == "password required"
    assert model.index(0, 1).data() == "3 indexed · 1 ⚠"
    assert "password required" in model.index(3, 0, model.index(0, 0)).data(Qt.ItemDataRole.ToolTipRole)
    model.set_busy_roots(["/b"])
    assert model.index(1, 1).data() == "indexing…"
    model.set_library(["/b"], [_f("/b/y.md", "/b")])
    assert _rows(model) == [("/b", ["/b/y.md"])]
    model.set_library([], [])
    assert model.rowCount() == 0


def test_source_list_model(qtmodeltester):
    model = SourceListModel()
    sources = [
        {"ordinal": 2, "title": "B", "path": "/b.pdf", "page": 4, "score": 0.5, "snippet": "two",
         "metadata": {"author": "Z", "producer": "pdfTeX", "created": "2023-02-10T09:27:35+00:00"}},
        {"ordinal": 1, "title": "A", "path": "/a.md", "page": 1, "score": 0.9, "snippet": "one", "metadata": {}},
    ]
    model.set_sources(sources, cited=[2])
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 2
    first = model.index(0)
    # The cited source first, then the others ("also found"), each by number.
    assert first.data(SourceListModel.NumberRole) == 2 and first.data(SourceListModel.CitedRole) is True
    assert (first.data(SourceListModel.TitleRole), first.data(SourceListModel.PageRole)) == ("B", 4)
    assert first.data(SourceListModel.MetadataRole) == "author: Z · created: 2023-02-10"
    assert first.data(SourceListModel.FirstAlsoFoundRole) is False
    second = model.index(1)
    assert second.data(SourceListModel.NumberRole) == 1 and second.data(SourceListModel.CitedRole) is False
    assert second.data(SourceListModel.FirstAlsoFoundRole) is True
    # Relevance in words, against the best source (0.9): 0.5 is "loosely related".
    assert second.data(SourceListModel.RelevanceRole) == "close match"
    assert first.data(SourceListModel.RelevanceRole) == "loosely related"
    assert model.row_of(2) == 0 and model.row_of(9) == -1
    assert first.data() == "[2] B — page 4"
    model.set_sources(sources, cited=[])
    assert [model.index(i).data(SourceListModel.NumberRole) for i in range(2)] == [1, 2]
    assert model.index(0).data(SourceListModel.FirstAlsoFoundRole) is True
    assert model.index(1).data(SourceListModel.FirstAlsoFoundRole) is False
    model.clear()
    assert model.rowCount() == 0
    assert model.rowCount(first) == 0


def test_conversation_list_model(qtmodeltester):
    model = ConversationListModel()
    model.set_items([ConversationInfo("a", "First", 1.0, 2.0, 3), ConversationInfo("b", "Second", 1.0, 1.0, 1)])
    model.set_current("b")
    qtmodeltester.check(model, force_py=True)
    assert model.index(0).data() == "First"
    assert model.index(1).data(ConversationListModel.IdRole) == "b"
    assert model.index(1).data(Qt.ItemDataRole.FontRole).bold()
    assert model.row_of("b") == 1
    assert model.rowCount(QModelIndex()) == 2
