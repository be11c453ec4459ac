"""The embedding model and its runtime, with the real all-MiniLM-L6-v2 (built once per machine
into the default models folder, which honours $EDGECHAT_MODELS)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from edgechat.core.embedding import Embedder, OnnxEmbedder
from edgechat.core.embedding.embedder import DISABLED_OPTIMIZERS
from edgechat.core.embedding.modelbuild import minilm

pytestmark = pytest.mark.slow

PARAPHRASE = ("How do I reset my password?", "What are the steps to change my login password?")
UNRELATED = "The recipe calls for two cups of flour and a pinch of salt."


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A wheel download (only when the model is not built yet) goes to a temporary folder.
    return minilm.ensure_minilm(download_dir=tmp_path_factory.mktemp("downloads"))


@pytest.fixture(scope="module", params=["int8", "fp32"])
def embedder(request: pytest.FixtureRequest, model_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(model_dir, variant=request.param, threads=2)


@pytest.fixture(scope="module")
def fp32(model_dir: Path) -> OnnxEmbedder:
    return OnnxEmbedder(model_dir, variant="fp32", threads=2)


def _texts() -> list[str]:
    return [
        "Short.",
        "A considerably longer sentence, so that the batch has to be padded to fit it in.",
        "",
        PARAPHRASE[0],
        "Rivers carry sediment to the sea. " * 12,
        UNRELATED,
        "two words",
        "Quarterly revenue grew by 12% while operating costs stayed flat.",
    ]


# --------------------------------------------------------------------------- the built folder


def test_model_folder_is_complete_and_verified(model_dir: Path) -> None:
    assert minilm.is_built(model_dir, check_hashes=True)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    for name in ("LICENSE", "NOTICE", "config.json", "model.safetensors", "tokenizer.json", "vocab.txt",
                 "model.onnx", "model.int8.onnx"):  # fmt: skip
        assert (model_dir / name).is_file(), name
        assert name in manifest["files"]
    assert manifest["licence"] == "Apache-2.0"
    assert "Apache" in (model_dir / "LICENSE").read_text()
    assert manifest["source"]["wheel"] == minilm.WHEEL_FILENAME
    assert manifest["default_variant"] == "int8"
    v = manifest["verification"]
    assert v["fp32_vs_reference_min_cosine"] > 0.9999
    assert v["int8_vs_fp32_min_cosine"] > 0.98
    assert v["fp32_paraphrase_cosine"] > v["fp32_unrelated_cosine"]


def test_folder_without_manifest_or_with_missing_file_is_not_built(model_dir: Path, tmp_path: Path) -> None:
    half = tmp_path / "half"
    half.mkdir()
    shutil.copy(model_dir / "config.json", half / "config.json")
    assert not minilm.is_built(half)  # no manifest: never taken as done
    shutil.copy(model_dir / "manifest.json", half / "manifest.json")
    assert not minilm.is_built(half)  # manifest lists files that are not there
    (half / "manifest.json").write_text("{not json")
    assert not minilm.is_built(half)


def test_ensure_returns_cached_folder_without_downloading(model_dir: Path, tmp_path: Path) -> None:
    untouched = tmp_path / "downloads"
    assert minilm.ensure_minilm(download_dir=untouched) == model_dir
    assert not untouched.exists()


# --------------------------------------------------------------------------- the embedder


def test_is_an_embedder(embedder: OnnxEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name == "all-MiniLM-L6-v2"
    assert embedder.dim == 384
    assert embedder.max_tokens == 256
    # dynamic int8 takes one activation scale per batch: it runs one text per call
    assert embedder.rows_per_run == (1 if embedder.variant == "int8" else embedder.batch_size)


def test_shapes_dtype_and_normalisation(embedder: OnnxEmbedder) -> None:
    texts = _texts()
    vecs = embedder.embed(texts)
    assert vecs.shape == (len(texts), 384)
    assert vecs.dtype == np.float32
    assert np.isfinite(vecs).all()
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)

    q = embedder.embed_query("where is the money going?")
    assert q.shape == (384,)
    assert q.dtype == np.float32
    assert abs(float(np.linalg.norm(q)) - 1.0) < 1e-5


def test_empty_list(embedder: OnnxEmbedder) -> None:
    out = embedder.embed([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_a_single_string_is_refused(embedder: OnnxEmbedder) -> None:
    with pytest.raises(TypeError):
        embedder.embed("not a list")  # type: ignore[arg-type]


def test_paraphrase_ranks_above_unrelated(embedder: OnnxEmbedder) -> None:
    q = embedder.embed_query(PARAPHRASE[0])
    docs = embedder.embed([UNRELATED, PARAPHRASE[1], "Stock markets fell sharply on Monday."])
    scores = docs @ q
    assert int(np.argmax(scores)) == 1
    assert scores[1] > scores[0] + 0.3


def test_batching_and_sorting_keep_input_order(model_dir: Path, embedder: OnnxEmbedder) -> None:
    texts = _texts()
    one_by_one = np.stack([embedder.embed([t])[0] for t in texts])
    together = embedder.embed(texts)
    np.testing.assert_allclose(together, one_by_one, atol=1e-4)
    # several batches, smaller than the input
    small = OnnxEmbedder(model_dir, variant=embedder.variant, threads=2, batch_size=3)
    np.testing.assert_allclose(small.embed(texts), one_by_one, atol=1e-4)
    # the same text twice in one call gives the same row
    dup = embedder.embed([texts[1], texts[4], texts[1]])
    np.testing.assert_allclose(dup[0], dup[2], atol=1e-6)


def test_embed_query_equals_embed(embedder: OnnxEmbedder) -> None:
    text = "what did the committee decide?"
    np.testing.assert_allclose(embedder.embed_query(text), embedder.embed([text])[0], atol=1e-6)


def test_long_text_is_truncated_to_max_tokens(embedder: OnnxEmbedder) -> None:
    long_text = " ".join(f"word{i} is here" for i in range(3000))
    enc = embedder.tokenizer.encode(long_text, add_special_tokens=False)
    assert len(enc.ids) > 4 * embedder.max_tokens  # the public tokenizer does not truncate
    vec = embedder.embed([long_text])
    assert vec.shape == (1, 384) and np.isfinite(vec).all()
    # what the model saw is exactly the first max_tokens - 2 word pieces ([CLS] and [SEP] added)
    head = long_text[: enc.offsets[embedder.max_tokens - 3][1]]
    np.testing.assert_allclose(vec[0], embedder.embed([head])[0], atol=1e-4)


def test_texts_given_with_their_token_ids_get_the_vectors_of_the_texts(embedder: OnnxEmbedder) -> None:
    texts = ["Venus is the hottest planet.", "Mercury is closest to the Sun.",
             " ".join(f"word{i} is here" for i in range(400))]  # longer than max_tokens: cut alike
    ids = [embedder.tokenizer.encode(t, add_special_tokens=False).ids for t in texts]
    expected = embedder.embed(texts)
    np.testing.assert_allclose(embedder.embed_encoded(texts, ids), expected, atol=1e-6)
    # a text without ids is tokenized as embed() does; the order is kept
    np.testing.assert_allclose(embedder.embed_encoded(texts, [ids[0], None, ids[2]]), expected, atol=1e-6)
    # the ids, not the text, are what is embedded when given
    swapped = embedder.embed_encoded(texts[:2], [ids[1], ids[0]])
    np.testing.assert_allclose(swapped, expected[[1, 0]], atol=1e-6)
    with pytest.raises(ValueError):
        embedder.embed_encoded(texts, ids[:2])


def test_public_tokenizer_has_no_padding_or_truncation(embedder: OnnxEmbedder) -> None:
    tok = embedder.tokenizer
    assert tok.padding is None
    assert tok.truncation is None
    text = "Hello, World! Offsets map back."
    enc = tok.encode(text, add_special_tokens=False)
    assert [text[a:b].lower() for a, b in enc.offsets][:3] == ["hello", ",", "world"]
    embedder.embed([text] * 3)  # embedding does not change the public tokenizer
    assert tok.padding is None and tok.truncation is None


def test_int8_agrees_with_fp32(model_dir: Path, fp32: OnnxEmbedder) -> None:
    int8 = OnnxEmbedder(model_dir, variant="int8", threads=2)
    texts = [t for t in _texts() if t]  # "" ([CLS][SEP] alone) is meaningless and drifts most
    cos = (int8.embed(texts) * fp32.embed(texts)).sum(axis=1)
    assert cos.min() > 0.98


def test_onnx_graph_agrees_with_numpy_reference(model_dir: Path, fp32: OnnxEmbedder) -> None:
    config = json.loads((model_dir / "config.json").read_text())
    weights = minilm.load_weights(model_dir)
    texts = [PARAPHRASE[0], UNRELATED, "Rivers carry sediment to the sea. " * 3]
    got = fp32.embed(texts)  # padded to the longest: also checks the attention mask
    for text, vec in zip(texts, got):
        enc = fp32.tokenizer.encode(text)
        ids, mask = np.array([enc.ids]), np.array([enc.attention_mask])
        hidden = minilm.reference_forward(weights, config, ids, mask, np.array([enc.type_ids]))
        ref = minilm.mean_pool_normalize(hidden, mask)[0]
        assert float(vec @ ref) > 0.9999
        np.testing.assert_allclose(vec, ref, atol=1e-4)


def test_any_onnx_folder_with_the_same_interface_works(model_dir: Path, fp32: OnnxEmbedder, tmp_path: Path) -> None:
    """No manifest, no config: only tokenizer.json and an ONNX file in the Optimum layout."""
    plain = tmp_path / "some-model"
    (plain / "onnx").mkdir(parents=True)
    shutil.copy(model_dir / "tokenizer.json", plain / "tokenizer.json")
    try:
        os.symlink(model_dir / "model.onnx", plain / "onnx" / "model.onnx")
    except OSError:
        shutil.copy(model_dir / "model.onnx", plain / "onnx" / "model.onnx")
    emb = OnnxEmbedder(plain, variant="fp32", threads=1)
    assert emb.name == "some-model"
    assert emb.dim == 384
    texts = [PARAPHRASE[0], UNRELATED]
    np.testing.assert_allclose(emb.embed(texts), fp32.embed(texts), atol=1e-5)
    with pytest.raises(FileNotFoundError):
        OnnxEmbedder(plain, variant="int8")


# --------------------------------------------------------------------------- speed change (issue 15)


def _chunks() -> list[str]:
    """Chunk-like texts of very different lengths (1 to 256 tokens), in no particular order."""
    words = ("the committee reviewed maintenance costs and agreed to postpone the renovation of the "
             "east wing while membership fees rose by four percent").split()  # fmt: skip
    return [" ".join(words[j % len(words)] for j in range(n)) for n in (3, 180, 1, 40, 400, 90, 12, 230, 7, 150)]


def test_batch_invariance_a_text_gets_the_same_vector_alone_and_in_a_batch(embedder: OnnxEmbedder) -> None:
    texts = _chunks()
    together = embedder.embed(texts)
    alone = np.stack([embedder.embed([t])[0] for t in texts])
    cos = (together.astype(np.float64) * alone).sum(axis=1)
    assert cos.min() >= 0.999
    # and in a different company: the same texts reversed, mixed with others
    other = embedder.embed([UNRELATED, *texts[::-1], PARAPHRASE[0]])[1:-1][::-1]
    assert (other.astype(np.float64) * alone).sum(axis=1).min() >= 0.999


def test_output_order_follows_input_order_with_mixed_lengths(embedder: OnnxEmbedder) -> None:
    texts = _chunks()
    vecs = embedder.embed(texts)
    perm = np.random.default_rng(15).permutation(len(texts))
    shuffled = embedder.embed([texts[i] for i in perm])
    np.testing.assert_allclose(shuffled, vecs[perm], atol=1e-5)
    # each row is its own text's vector: the nearest row of a text embedded alone is its own
    for i in (0, 4, 9):
        assert int(np.argmax(vecs @ embedder.embed([texts[i]])[0])) == i


def test_leaving_out_skip_layer_norm_fusion_keeps_the_vectors(model_dir: Path, embedder: OnnxEmbedder) -> None:
    """The default session leaves out SkipLayerNormFusion (faster, same arithmetic up to rounding):
    vectors indexed before the change stay comparable with queries embedded after it, long texts
    included (cut at max_tokens as before). In int8 a rounding difference can move an activation
    across a quantisation step, so the bound there is int8's own noise (it is 0.98 against fp32)."""
    assert "SkipLayerNormFusion" in DISABLED_OPTIMIZERS
    before = OnnxEmbedder(model_dir, variant=embedder.variant, threads=2, disabled_optimizers=())
    texts = [*_chunks(), " ".join(f"word{i} is here" for i in range(3000))]
    cos = (embedder.embed(texts).astype(np.float64) * before.embed(texts)).sum(axis=1)
    assert cos.min() > (0.995 if embedder.variant == "int8" else 0.9999)


def test_default_threads_are_the_physical_cores_it_may_use() -> None:
    from edgechat.core.cpus import available_cores

    n = available_cores()
    assert 1 <= n <= (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def test_texts_run_side_by_side_each_get_their_own_vector(model_dir) -> None:
    """The int8 model runs one text per call; two lanes run two texts at once on one thread
    each. Each vector must still be the one its text gets alone, in the order given."""
    side = OnnxEmbedder(model_dir, variant="int8", threads=2)
    one = OnnxEmbedder(model_dir, variant="int8", threads=2, lanes=1)
    assert side.lanes == 2 and one.lanes == 1
    texts = [("word " * n).strip() + f" number {n}" for n in (3, 180, 40, 7, 120, 60, 15, 90, 1, 250)]
    together = side.embed(texts)
    alone = np.stack([side.embed([t])[0] for t in texts])
    assert np.min(np.sum(together * alone, axis=1)) > 0.9999
    assert np.min(np.sum(together * one.embed(texts), axis=1)) > 0.9999
    assert np.sum(together[0] * together[1]) < 0.99  # not one vector copied into every row
    side.close()
    assert np.allclose(side.embed(texts[:3]), together[:3], atol=1e-5)  # the lanes start again after close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads have their own CPU priority on Linux")
def test_the_lanes_run_at_the_callers_cpu_priority(model_dir) -> None:
    """The app indexes on a thread at lower CPU priority (edgechat.service.host) and answers on
    one at normal priority. The lanes' threads inherit the priority of the thread that starts
    them, so each priority gets lanes of its own: indexing's texts must not run at the window's
    priority, nor an answer's at indexing's."""
    emb = OnnxEmbedder(model_dir, variant="int8", threads=2, lanes=2)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    lowered = min(19, base + 5)
    seen: dict[str, set[int]] = {"low": set(), "normal": set()}
    asking = ["normal"]
    forward = emb._run

    def noting_priority(*arrays):  # the real forward pass; notes the priority of the lane it ran on
        seen[asking[0]].add(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return forward(*arrays)

    emb._run = noting_priority  # type: ignore[method-assign]
    texts = ["first text", "a second, longer text to embed", "third", "and a fourth one"]

    def from_a_lowered_thread() -> None:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), lowered)
        asking[0] = "low"
        emb.embed(texts)

    t = threading.Thread(target=from_a_lowered_thread)
    t.start()
    t.join()
    asking[0] = "normal"
    emb.embed(texts)
    emb.close()
    assert seen == {"low": {lowered}, "normal": {base}}
