"""The first-run model choice, in the window: a real model folder (SmolLM2, built by
scripts/setup.sh) is served over HTTP on 127.0.0.1 by a local stand-in for the model host
(tests/model_host.py), and a catalog entry pointing at it is handed to the window. The download
runs through the real downloader and installer (sizes, sha256, loading the model) into a
temporary models folder; the engine is the real one, choosing its client by the real rule."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtWidgets import QPushButton

from edgechat.core.engine import Engine, model_offers
from edgechat.ui.first_run import CHOICE_KEY, EXTRACTIVE_CHOICE, ModelChoiceDialog
from edgechat.ui.mainwindow import NO_MODEL_NOTICE, MainWindow
from tests.model_host import LocalModelHost, closed_port, sha256_of


@pytest.fixture
def models(tmp_path: Path, monkeypatch) -> Path:
    """An empty models folder: no language model is installed."""
    folder = tmp_path / "models"
    monkeypatch.setenv("EDGECHAT_MODELS", str(folder))
    return folder


@pytest.fixture
def host(smollm2_dir: Path):
    with LocalModelHost(smollm2_dir) as h:
        yield h


@pytest.fixture
def open_window(qtbot, tmp_path: Path, embedder, models):
    """open_window(catalog, qsettings=None) -> a shown MainWindow with no model installed."""
    windows: list[MainWindow] = []

    def make(catalog, qsettings: QSettings | None = None) -> MainWindow:
        lib = tmp_path / "library"
        qs = qsettings or QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        w = MainWindow(lib, engine_factory=lambda status: Engine(lib, embedder=embedder), qsettings=qs,
                       model_catalog=catalog, download_dir=tmp_path / "downloads")
        qtbot.addWidget(w)
        w.show()
        windows.append(w)
        qtbot.waitUntil(lambda: w.engine_ready, timeout=30000)
        return w

    yield make
    for w in windows:
        if w.workers.running:
            w.close()


def offered(qtbot, w: MainWindow) -> ModelChoiceDialog:
    qtbot.waitUntil(lambda: w.model_dialog is not None and w.model_dialog.isVisible(), timeout=30000)
    assert w.model_dialog is not None
    return w.model_dialog


def test_the_first_run_offers_downloads_import_and_no_model_and_says_which_cannot_download(qtbot, open_window,
                                                                                         host):
    entry = host.entry("served-smollm2")
    builds = [e for e in model_offers() if e.build]
    w = open_window([entry, *builds])
    dialog = offered(qtbot, w)
    assert w.chat.notice.isVisible() and w.chat.notice.text() == NO_MODEL_NOTICE
    assert list(dialog.radios) == ["served-smollm2", "import", "server", "extractive"]
    assert dialog.choice() == "served-smollm2" and dialog.action_button.text() == "&Download (about 271 MB)"
    text = dialog.radios["served-smollm2"].text().replace("&", "")
    assert text == entry.title
    detail = dialog.radios["served-smollm2"].accessibleDescription()
    assert "Apache-2.0 licence" in detail and "A model served by the test." in detail and "MB to download" in detail
    # The models built from PyPI are named, with the reason and no button.
    note = dialog.build_note.text()
    for title in ("Qwen2.5-Coder-0.5B-Instruct", "Qwen2.5-Coder-1.5B-Instruct", "SmolLM2-135M-Instruct"):
        assert title in note
    assert "scripts/setup.sh" in note and "no converted folder is hosted" in note
    buttons = set(dialog.findChildren(QPushButton))
    assert buttons == {dialog.action_button, dialog.cancel_button, dialog.close_button}
    # The actual default catalog: both Phi models download from Hugging Face over HTTPS.
    phi = [e.name for e in model_offers() if not e.build]
    assert phi == ["phi-3.5-mini-instruct-cpu-int4", "phi-4-mini-instruct-cpu-int4"]
    # Keyboard: the choices are one Tab stop (arrows move between them), then the buttons.
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=5000)
    dialog.radios["served-smollm2"].setFocus()
    qtbot.keyClick(dialog.radios["served-smollm2"], Qt.Key.Key_Down)
    assert dialog.choice() == "import" and dialog.radios["import"].hasFocus()
    qtbot.keyClick(dialog.radios["import"], Qt.Key.Key_Tab)
    assert dialog.action_button.hasFocus()
    qtbot.keyClick(dialog.action_button, Qt.Key.Key_Tab)
    assert dialog.close_button.hasFocus()
    assert dialog.action_button.text() == "Choose the &folder\u2026"
    dialog.select("extractive")
    assert dialog.action_button.text() == "&Use quotes only"


@pytest.mark.slow
def test_a_download_shows_progress_installs_the_model_and_makes_it_active(qtbot, open_window, host, models,
                                                                       tmp_path):
    entry = host.entry("served-smollm2")
    w = open_window([entry])
    dialog = offered(qtbot, w)
    values: list[int] = []
    dialog.progress.valueChanged.connect(values.append)
    ticks = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(1))  # the window's event loop keeps running meanwhile
    timer.start(50)
    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    assert dialog.busy and not dialog.action_button.isEnabled() and dialog.cancel_button.isVisible()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=180000)
    timer.stop()
    assert dialog.last_error == ""
    assert dialog.installed == "served-smollm2"
    assert values[-1] == dialog.progress.maximum() == 1000 and max(values) == 1000
    assert len([v for v in values if 0 < v < 1000]) >= 2  # it moved in between
    assert len(ticks) >= 10
    assert "is installed" in dialog.status.text()
    # Installed whole, checked, and active.
    installed = models / "llm" / "served-smollm2"
    assert sha256_of(installed / "model.onnx.data") == sha256_of(host.root / "model.onnx.data")
    assert '"served-smollm2"' in (models / "active.json").read_text()
    assert not (tmp_path / "downloads").exists()  # the parts are cleared once installed
    # The window answers with it: the notice goes, the setting and the choice are kept.
    qtbot.waitUntil(lambda: not w.chat.notice.isVisible(), timeout=30000)
    qtbot.waitUntil(lambda: w.models == [("served-smollm2", w.models[0][1])] if w.models else False, timeout=30000)
    assert w.settings.model == "served-smollm2"
    assert w.qsettings.value(CHOICE_KEY) == "download:served-smollm2"
    assert dialog.action_button.text() == "&Close"
    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    assert not dialog.isVisible()


@pytest.mark.slow
def test_cancel_keeps_the_part_and_the_next_download_resumes_it(qtbot, open_window, host, models, tmp_path):
    entry = host.entry("served-smollm2")
    w = open_window([entry])
    dialog = offered(qtbot, w)
    reached, go = host.hold("model.onnx.data", after=40_000_000)
    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    part = tmp_path / "downloads" / "model.onnx.data.part"
    qtbot.waitUntil(lambda: reached.is_set() and part.exists() and part.stat().st_size >= 39_000_000, timeout=60000)
    qtbot.waitUntil(lambda: "model.onnx.data" in dialog.status.text(), timeout=10000)
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    go.set()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=60000)
    have = part.stat().st_size
    assert 39_000_000 <= have < (host.root / "model.onnx.data").stat().st_size
    assert dialog.last_error == "" and "Download paused" in dialog.status.text()
    assert dialog.action_button.text() == "&Resume download" and dialog.action_button.isEnabled()
    assert not (models / "llm" / "served-smollm2").exists()

    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.busy, timeout=180000)
    assert dialog.installed == "served-smollm2", dialog.last_error
    assert ("model.onnx.data", f"bytes={have}-") in host.requests  # resumed, not started over
    assert [r for r in host.requests if r[0] == "model.onnx.data"] == [("model.onnx.data", None),
                                                                       ("model.onnx.data", f"bytes={have}-")]
    installed = models / "llm" / "served-smollm2" / "model.onnx.data"
    assert sha256_of(installed) == sha256_of(host.root / "model.onnx.data")


def test_a_wrong_sha256_is_reported_and_nothing_is_installed(qtbot, open_window, host, models):
    entry = host.entry("served-smollm2", wrong_sha256="model.onnx")
    w = open_window([entry])
    dialog = offered(qtbot, w)
    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.busy, timeout=60000)
    assert "model.onnx: checksum mismatch" in dialog.last_error
    assert dialog.status.isVisible() and "Nothing was installed" in dialog.status.text()
    assert not (models / "llm" / "served-smollm2").exists()
    assert not (models / "active.json").exists()
    assert w.qsettings.value(CHOICE_KEY) is None  # nothing chosen yet: a try may follow
    assert dialog.action_button.isEnabled() and dialog.action_button.text().startswith(("&Download", "&Resume"))
    assert w.chat.notice.text() == NO_MODEL_NOTICE


def test_an_unreachable_host_says_so_and_the_window_stays_usable(qtbot, open_window, host, models, tmp_path):
    port = closed_port()
    served = host.entry("served-smollm2", sha256=False)
    entry = type(served)(**{**served.__dict__, "files": tuple(
        type(f)(f.path, f.url.replace(host.url, f"http://127.0.0.1:{port}"), f.size) for f in served.files)})
    w = open_window([entry])
    dialog = offered(qtbot, w)
    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not dialog.busy, timeout=30000)
    assert dialog.last_error == (f"Could not reach 127.0.0.1:{port} \u2014 check your internet connection; nothing "
                                 "was changed. Cause: connection refused. A model folder copied from another "
                                 "computer can be imported instead.")
    assert dialog.status.text() == dialog.last_error
    assert not (models / "llm").exists() or not any((models / "llm").iterdir())
    assert dialog.action_button.isEnabled() and all(r.isEnabled() for r in dialog.radios.values())
    # Escape closes it; the window is usable.
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    assert not dialog.isVisible()
    assert w.qsettings.value(CHOICE_KEY) == "later"  # answered (not now): not offered by itself again
    assert w.chat.input.isEnabled()
    qtbot.keyClicks(w.chat.input, "still here")
    assert "still here" in w.chat.input.toPlainText()


def test_choosing_no_model_is_remembered_and_the_choice_is_not_offered_again(qtbot, open_window, host, tmp_path):
    entry = host.entry("served-smollm2")
    qs = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = open_window([entry], qs)
    dialog = offered(qtbot, w)
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=5000)
    qtbot.keyClick(dialog, Qt.Key.Key_Q, Qt.KeyboardModifier.AltModifier)  # the choice's mnemonic
    qtbot.waitUntil(lambda: dialog.choice() == EXTRACTIVE_CHOICE, timeout=2000)  # an animated click
    qtbot.keyClick(dialog, Qt.Key.Key_Return)  # the default button: Use quotes only
    assert not dialog.isVisible()
    assert qs.value(CHOICE_KEY) == "extractive" and w.settings.model == "extractive"
    assert not w.chat.notice.isVisible()
    assert host.requests == []  # nothing was downloaded
    w.close()

    # The next start: not offered again, and the notice does not come back.
    qs2 = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w2 = open_window([entry], qs2)
    qtbot.waitUntil(lambda: w2.model_label.text() == "Answers: extractive (no model)", timeout=30000)
    qtbot.wait(300)
    assert w2.model_dialog is None and not w2.chat.notice.isVisible()
    # File › Choose a model… opens it again.
    w2.act_choose_model.trigger()
    again = offered(qtbot, w2)
    assert again.choice() == "served-smollm2"
    again.reject()


@pytest.mark.slow
def test_importing_a_folder_from_the_choice_makes_it_answer(qtbot, open_window, host, models, smollm2_dir):
    w = open_window([host.entry("served-smollm2")])
    dialog = offered(qtbot, w)
    dialog.select("import")
    dialog.import_folder(str(smollm2_dir))  # what Choose the folder… does once a folder is picked
    assert dialog.busy and not dialog.action_button.isEnabled()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=120000)
    assert dialog.last_error == "" and dialog.installed == smollm2_dir.name
    assert (models / "llm" / smollm2_dir.name / "genai_config.json").is_file()
    assert w.settings.model == smollm2_dir.name
    assert w.qsettings.value(CHOICE_KEY) == f"import:{smollm2_dir.name}"
    qtbot.waitUntil(lambda: not w.chat.notice.isVisible(), timeout=30000)
    assert host.requests == []


def test_closing_the_window_during_a_download_stops_it_and_keeps_the_part(qtbot, open_window, host, tmp_path):
    w = open_window([host.entry("served-smollm2")])
    dialog = offered(qtbot, w)
    reached, go = host.hold("model.onnx.data", after=20_000_000)
    qtbot.mouseClick(dialog.action_button, Qt.MouseButton.LeftButton)
    part = tmp_path / "downloads" / "model.onnx.data.part"
    qtbot.waitUntil(lambda: reached.is_set() and part.exists() and part.stat().st_size >= 19_000_000, timeout=60000)
    thread = dialog._thread
    assert thread is not None
    threading.Timer(0.3, go.set).start()  # the host sends on; the download notices the cancel
    w.close()
    assert not thread.is_alive()
    assert not dialog.isVisible()  # closed with the window (else the app would not quit)
    assert w.qsettings.value(CHOICE_KEY) is None  # not answered: offered again next start
    assert part.stat().st_size >= 19_000_000
    assert not (tmp_path / "models" / "llm" / "served-smollm2").exists()
