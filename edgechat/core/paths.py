"""Every path EdgeChat writes to, in one place.

Layout under the data root (default: platformdirs' user data dir, or $EDGECHAT_HOME):

    models/embedders/<name>/      converted embedding models (ONNX + tokenizer + licence)
    models/llm/<name>/            onnxruntime-genai model folders
    models/active.json            which language model is in use
    libraries/default/            the default library (overridden by --library or $EDGECHAT_LIBRARY)
    cache/                        downloads and conversion scratch space
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "EdgeChat"


def data_root() -> Path:
    env = os.environ.get("EDGECHAT_HOME")
    root = Path(env) if env else Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    return root.expanduser()


def models_dir() -> Path:
    """Models are large and shared by every library; $EDGECHAT_MODELS moves them (tests point
    it at the machine's model cache while their libraries live in temporary folders)."""
    env = os.environ.get("EDGECHAT_MODELS")
    return Path(env).expanduser() if env else data_root() / "models"


def embedders_dir() -> Path:
    return models_dir() / "embedders"


def llm_dir() -> Path:
    return models_dir() / "llm"


def cache_dir() -> Path:
    env = os.environ.get("EDGECHAT_CACHE")
    return Path(env).expanduser() if env else data_root() / "cache"


def default_library_dir() -> Path:
    env = os.environ.get("EDGECHAT_LIBRARY")
    if env and not env.strip().startswith("chroma:"):  # (a team library's address is no folder)
        return Path(env).expanduser()
    return data_root() / "libraries" / "default"


def log_dir() -> Path:
    env = os.environ.get("EDGECHAT_HOME")
    if env:
        return Path(env).expanduser() / "logs"
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def conversations_dir(library: Path) -> Path:
    return library / "conversations"
