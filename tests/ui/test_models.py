"""The item models pass Qt's model tester through the updates the app makes to them."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt

from edgechat.core.conversations import ConversationInfo
from edgechat.core.records import FileState, LibraryFile
from edgechat.ui.models import (
    ConversationListModel,
    LibraryModel,
    SourceListModel,
    distinct_titles,
    document_label,
)


def _f(path: str, root: str, state: str = "done", problem: str = "", chunks: int = 2, title: str = "") -> LibraryFile:
    return LibraryFile(path, root, FileState(state), problem=problem, title=title, format="text", pages=1,
                       chunks=chunks)


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
        {"ordinal": 2, "title": "Harbour Bells", "path": "/b.pdf", "page": 4, "score": 0.5, "snippet": "two",
         "metadata": {"author": "Z", "producer": "pdfTeX", "created": "2023-02-10T09:27:35+00:00"}},
        {"ordinal": 1, "title": "a", "path": "/a.md", "page": 1, "score": 0.9, "snippet": "one", "metadata": {}},
    ]
    model.set_sources(sources, cited=[2])
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == 2
    first = model.index(0)
    # The cited source first, then the others ("also found"), each by number.
    assert first.data(SourceListModel.NumberRole) == 2 and first.data(SourceListModel.CitedRole) is True
    assert (first.data(SourceListModel.TitleRole), first.data(SourceListModel.PageRole)) == ("Harbour Bells", 4)
    # the file name beside the title; a title that is only the file name gives way to the file name
    assert first.data(SourceListModel.FileNameRole) == "b.pdf"
    assert (model.index(1).data(SourceListModel.TitleRole), model.index(1).data(SourceListModel.FileNameRole)) == \
        ("a.md", "")
    assert first.data(SourceListModel.MetadataRole) == "author: Z · created: 2023-02-10"
    assert first.data(SourceListModel.FirstAlsoFoundRole) is False
    second = model.index(1)
    assert second.data(SourceListModel.NumberRole) == 1 and second.data(SourceListModel.CitedRole) is False
    assert second.data(SourceListModel.FirstAlsoFoundRole) is True
    # Relevance in words, against the best source (0.9): 0.5 is "loosely related".
    assert second.data(SourceListModel.RelevanceRole) == "close match"
    assert first.data(SourceListModel.RelevanceRole) == "loosely related"
    assert model.row_of(2) == 0 and model.row_of(9) == -1
    assert first.data() == "[2] Harbour Bells — b.pdf · page 4"
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


REPORTS = ["Field Inspection Report, Lower Mill, Eastbrook, 03/14/2019, Stone footbridge",
           "Field Inspection Report, Hollow Lane, Westford, 04/02/2019, Timber culvert"]


def test_titles_that_start_alike_are_shortened_where_they_are_alike():
    shown = distinct_titles([*REPORTS, "Field Notes", "An Introduction to R"])
    assert shown[REPORTS[0]] == "Field\u2026 Lower Mill, Eastbrook, 03/14/2019, Stone footbridge"
    assert shown[REPORTS[1]] == "Field\u2026 Hollow Lane, Westford, 04/02/2019, Timber culvert"
    assert shown["Field Notes"] == "Field Notes" and shown["An Introduction to R"] == "An Introduction to R"
    # the same title twice is one document's name twice: the file names beside tell them apart
    assert distinct_titles([REPORTS[0], REPORTS[0]]) == {REPORTS[0]: REPORTS[0]}
    assert document_label(REPORTS[0], "/r/20190314X00112.pdf") == f"{REPORTS[0]} \u2014 20190314X00112.pdf"
    assert document_label("R-FAQ", "/m/R-FAQ.pdf") == "R-FAQ.pdf"


def test_the_library_shows_titles_with_the_file_name_beside_them(qtmodeltester):
    model = LibraryModel()
    files = [_f("/r/20190314X00112.pdf", "/r", title=REPORTS[0]), _f("/r/20190402X00020.pdf", "/r", title=REPORTS[1]),
             _f("/r/notes.txt", "/r", title="notes")]
    model.set_library(["/r"], files)
    qtmodeltester.check(model, force_py=True)
    root = model.index(0, 0)
    names = [model.index(i, 0, root).data() for i in range(3)]
    assert names == ["Field\u2026 Lower Mill, Eastbrook, 03/14/2019, Stone footbridge \u2014 20190314X00112.pdf",
                     "Field\u2026 Hollow Lane, Westford, 04/02/2019, Timber culvert \u2014 20190402X00020.pdf",
                     "notes.txt"]
    assert [model.index(i, 0, root).data(LibraryModel.TitledRole) for i in range(3)] == [True, True, False]
    assert REPORTS[0] in model.index(0, 0, root).data(Qt.ItemDataRole.ToolTipRole)  # the whole title
    # a title alone in the library is shown whole
    model.set_library(["/r"], files[:1] + files[2:])
    assert model.index(0, 0, root).data().startswith(REPORTS[0])
