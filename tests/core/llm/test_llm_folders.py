"""Model-folder helpers shared by the manager, the builder and the downloader."""

from __future__ import annotations

from edgechat.core.llm.folders import install_folder


def test_install_folder_replaces_with_renames(tmp_path):
    target = tmp_path / "m"
    target.mkdir()
    (target / "old.txt").write_text("old")
    staging = tmp_path / ".build-m"
    staging.mkdir()
    (staging / "new.txt").write_text("new")
    install_folder(staging, target)
    assert [p.name for p in target.iterdir()] == ["new.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]
