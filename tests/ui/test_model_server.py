"""A model server in the window: set up in Settings (List models, Test, Use this server) against a
real llama.cpp server (tests/llama_server.py), answers streamed through it into the transcript,
a server on another machine named wherever the model is, and a server that is down as one line
under a question the chat keeps. The engine is the real one, choosing its client by the real
rule from a temporary models folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt

from edgechat.core.engine import Engine
from edgechat.core.llm.manager import ModelManager
from edgechat.core.llm.servers import ServerConfig
from edgechat.ui.mainwindow import ELSEWHERE, MainWindow
from edgechat.ui.server_dialog import ServerDialog
from edgechat.ui.settings import AppSettings, SettingsDialog
from tests.helpers import make_corpus
from tests.llama_server import LlamaServer, free_port, this_machine_address


@pytest.fixture
def models(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "models"
    monkeypatch.setenv("EDGECHAT_MODELS", str(folder))
    return folder


@pytest.fixture
def window(qtbot, tmp_path: Path, embedder, models):
    windows: list[MainWindow] = []

    def make() -> MainWindow:
        lib = tmp_path / "library"
        qs = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        w = MainWindow(lib, engine_factory=lambda status: Engine(lib, embedder=embedder), qsettings=qs)
        qtbot.addWidget(w)
        w.show()
        windows.append(w)
        qtbot.waitUntil(lambda: w.engine_ready, timeout=30000)
        w.add_paths([str(make_corpus(tmp_path / "docs"))])
        qtbot.waitUntil(lambda: not w.workers.busy and w.workers.pending() == 0, timeout=60000)
        return w

    yield make
    for w in windows:
        if w.workers.running:
            w.close()


def ask(qtbot, w: MainWindow, question: str, timeout: int = 180000):
    w.chat.input.setPlainText(question)
    qtbot.keyClick(w.chat.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not w.controller.answering, timeout=timeout)
    return w.controller.turns[-1]


def test_settings_set_up_a_server_from_its_own_list_of_models_and_test_it(qtbot, models, llama_server):
    settings = SettingsDialog(AppSettings(), [], "")
    qtbot.addWidget(settings)
    settings.add_server()
    dialog = settings.server_dialog
    assert isinstance(dialog, ServerDialog) and dialog.isVisible()
    dialog.name_edit.setText("office")
    dialog.url_edit.setText(llama_server.url)
    assert dialog.where_label.text() == "This server is on this computer: nothing leaves it."
    dialog.list_models()
    assert dialog.busy and not dialog.test_button.isEnabled()  # the window's thread is free meanwhile
    qtbot.waitUntil(lambda: not dialog.busy, timeout=30000)
    assert [dialog.model_box.itemText(i) for i in range(dialog.model_box.count())] == [llama_server.model]
    dialog.test()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert dialog.last_check is not None and dialog.last_check.ok, dialog.last_error
    shown = dialog.result_label.text()
    assert shown.count("\u2714") == 3 and "\u2716" not in shown and "answers and serves 1 model(s)" in shown
    qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10000)
    assert settings.model_box.currentData() == "office"
    assert settings.result_settings().model == "office"
    assert settings.model_note.text() == "Models run on this computer; nothing is sent anywhere."
    assert [s.name for s in ModelManager().list_servers()] == ["office"]


def test_the_test_button_names_what_fails(qtbot, models, llama_server):
    dialog = ServerDialog()
    qtbot.addWidget(dialog)
    dialog.url_edit.setText(llama_server.url)
    dialog.model_box.setCurrentText("no-such-model")
    dialog.test()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=30000)
    lines = dialog.result_label.text().split("<br>")
    assert lines[0].startswith("\u2714 The server at 127.0.0.1 answers")
    assert lines[-1] == f"\u2716 The model server at 127.0.0.1 has no model &#x27;no-such-model&#x27;; it serves: " \
                        f"{llama_server.model}"
    dialog.url_edit.setText(f"http://127.0.0.1:{free_port()}/v1")
    dialog.test()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=30000)
    assert "not answering (connection refused)" in dialog.result_label.text()
    assert ModelManager().list_servers() == []  # nothing kept until Use this server


def test_a_remote_address_says_where_answers_are_written_before_anything_is_sent(qtbot, models):
    dialog = ServerDialog()
    qtbot.addWidget(dialog)
    dialog.url_edit.setText("http://192.168.1.20:11434")
    assert dialog.where_label.text() == ("Answers will be written on 192.168.1.20: the question and the passages "
                                         "are sent there.")


def test_answers_stream_through_a_server_on_another_machine_and_say_so(qtbot, window, models, llama_server):
    with LlamaServer(llama_server.gguf, host=this_machine_address(), n_ctx=2048) as remote:
        ModelManager().add_server(ServerConfig("office", remote.url, remote.model, context_length=2048))
        ModelManager().use("office")
        w = window()
        deltas: list[str] = []
        w.workers.answer.sig_delta.connect(lambda ev: deltas.append(ev.text))
        turn = ask(qtbot, w, "How long is a year on Mercury?")
        assert turn.stop_reason in ("eos", "max_tokens"), turn.note
        assert turn.answer.strip() and deltas, "nothing was streamed"
        assert turn.sources  # searched here, as with a local model
        note = f"Answers are written on {remote.host}: the question and the passages are sent there."
        assert w.chat.notice.isVisible() and note in w.chat.notice.text()
        assert w.model_label.text() == f"Model: office {ELSEWHERE}" and w.model_label.toolTip() == note
        assert set(w.chat.transcript.chip_numbers(0)) == set(turn.cited_numbers)


def test_a_server_that_is_down_is_one_line_and_the_chat_keeps_the_question(qtbot, window, models):
    ModelManager().add_server(ServerConfig("gone", f"http://127.0.0.1:{free_port()}/v1", "m"))
    ModelManager().use("gone")
    w = window()
    turn = ask(qtbot, w, "How long is a year on Mercury?")
    assert turn.stop_reason == "error"
    assert turn.note.startswith("The answer failed: The model server at 127.0.0.1 is not answering "
                                "(connection refused)") and "\n" not in turn.note
    assert w.controller.turns[-1].question == "How long is a year on Mercury?"
    assert w.chat.input.isEnabled()


def test_the_first_run_choice_sets_up_a_server_that_then_answers(qtbot, tmp_path, embedder, models, llama_server):
    from edgechat.ui.first_run import CHOICE_KEY, SERVER

    lib = tmp_path / "library"
    qs = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(lib, engine_factory=lambda status: Engine(lib, embedder=embedder), qsettings=qs, model_catalog=[])
    qtbot.addWidget(w)
    w.show()
    qtbot.waitUntil(lambda: w.model_dialog is not None and w.model_dialog.isVisible(), timeout=30000)
    choice = w.model_dialog
    assert choice is not None
    choice.select(SERVER)
    assert choice.action_button.text() == "Set up the &server\u2026"
    qtbot.mouseClick(choice.action_button, Qt.MouseButton.LeftButton)
    dialog = choice.server_dialog
    assert isinstance(dialog, ServerDialog) and dialog.isVisible()
    dialog.name_edit.setText("bigger")
    dialog.url_edit.setText(llama_server.url)
    dialog.model_box.setCurrentText(llama_server.model)
    dialog.save()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=10000)
    assert choice.installed == "bigger" and qs.value(CHOICE_KEY) == "server:bigger"
    assert w.settings.model == "bigger"
    qtbot.waitUntil(lambda: w.model_label.text() == "Model: bigger", timeout=30000)
    assert w.model_label.toolTip() == ""  # on this computer: nothing to warn of
    w.close()
