"""Importing a language model folder from the settings dialog: off the window's thread, with a
busy dialog, the new model listed and chosen; a folder that is not a model is refused with a
message. A real model folder (SmolLM2, built by scripts/setup.sh) is copied into a temporary
models folder."""

from __future__ import annotations

from edgechat.ui.settings import AppSettings, SettingsDialog


def test_a_model_folder_is_imported_and_chosen(qtbot, tmp_path, monkeypatch, smollm2_dir):
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    dialog = SettingsDialog(AppSettings(), [], "")
    qtbot.addWidget(dialog)
    assert [dialog.model_box.itemData(i) for i in range(dialog.model_box.count())] == ["extractive"]
    dialog.import_folder(str(smollm2_dir))
    assert not dialog.import_button.isEnabled()  # working: the window's thread is free meanwhile
    qtbot.waitUntil(lambda: dialog.import_button.isEnabled(), timeout=120000)
    assert dialog.import_error == ""
    assert dialog.model_box.currentData() == smollm2_dir.name
    assert dialog.result_settings().model == smollm2_dir.name
    assert (tmp_path / "models" / "llm" / smollm2_dir.name / "genai_config.json").is_file()


def test_a_folder_that_is_not_a_model_is_refused_with_a_reason(qtbot, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    shown: list[str] = []
    # The message box is modal; record what it would say instead of waiting for a click.
    monkeypatch.setattr(QMessageBox, "warning", lambda parent, title, text: shown.append(text))
    (tmp_path / "notes").mkdir()
    dialog = SettingsDialog(AppSettings(), [], "")
    qtbot.addWidget(dialog)
    dialog.import_folder(str(tmp_path / "notes"))
    qtbot.waitUntil(lambda: dialog.import_button.isEnabled(), timeout=30000)
    assert "genai_config.json not found" in dialog.import_error
    assert shown and "not imported" in shown[0]
    assert dialog.model_box.count() == 1  # still only "extractive"


def test_without_a_model_the_notice_leads_to_importing_one(qtbot, make_window):
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from edgechat.ui.mainwindow import NO_MODEL_NOTICE

    w = make_window()
    # What the window shows when the engine reports no language model (this machine has models,
    # so the engine would not say so here).
    w.chat.set_notice(NO_MODEL_NOTICE)
    assert w.chat.notice.isVisible()
    assert 'href="settings"' in w.chat.notice.text() and "import a model folder" in w.chat.notice.text()
    seen: list[object] = []

    def look_and_close() -> None:
        dialog = QApplication.activeModalWidget()
        seen.append(dialog)
        if dialog is not None:
            dialog.reject()

    QTimer.singleShot(300, look_and_close)
    w.chat.notice.linkActivated.emit("settings")  # what a click on the link does
    assert seen and isinstance(seen[0], SettingsDialog) and seen[0].import_button.isEnabled()
