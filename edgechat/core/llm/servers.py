"""Model servers the user configured: OpenAI-compatible endpoints (Ollama, LM Studio, llama.cpp's
server, vLLM, ...) that write answers instead of a model on this computer.

Kept in `<models_dir>/servers.json`, beside the model folders, and named like them: a server's
name is what `edgechat models use NAME` and the Settings list choose, and active.json names it
as it names a model folder. An API key is never written there: it is kept in the system keyring
(the `keyring` package: Secret Service, macOS Keychain, Windows Credential Locker) under the
service "EdgeChat" and the user "server:<name>".

    cfg = ServerConfig("office", "http://192.168.1.20:11434/v1", "qwen2.5:7b")
    add_server(cfg, models_dir)               # or ModelManager().add_server(...)
    where(cfg)                                # "192.168.1.20", or "" when on this computer

Nothing here touches the network; edgechat.core.llm.server_client talks to a server.
Standard library only, and `keyring` when a key is stored or read.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from edgechat.core.llm.folders import ModelError, validate_name, write_json_atomic

SERVERS_FILE = "servers.json"
KEYRING_SERVICE = "EdgeChat"
DEFAULT_CONTEXT = 4096  # tokens, when the server does not say its model's context


@dataclass(frozen=True)
class ServerConfig:
    name: str
    url: str  # the API's base URL, ending in /v1 (normalized by `normalize_url`)
    model: str  # the model's id, as the server's /v1/models lists it
    context_length: int = DEFAULT_CONTEXT  # used when the server does not say
    has_key: bool = False  # an API key is kept in the keyring for this server
    timeout: float = 120.0  # seconds to wait for the first word, and between words
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    def label(self) -> str:
        place = where(self)
        return f"{self.name} ({self.model} on {place or 'this computer'}, a model server)"


def normalize_url(url: str) -> str:
    """`http://host:port`, `host:port/v1`, `.../v1/chat/completions` -> `http://host:port/v1`."""
    url = url.strip()
    if not url:
        raise ModelError("the server's URL is empty")
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(f"{url!r} is not an http:// or https:// address")
    path = parts.path.rstrip("/")
    for tail in ("/chat/completions", "/models", "/completions"):
        if path.endswith(tail):
            path = path[: -len(tail)]
    if not path.endswith("/v1"):
        path += "/v1"
    return f"{parts.scheme}://{parts.netloc}{path}"


def is_this_computer(host: str) -> bool:
    """True for loopback (localhost, 127.0.0.0/8, ::1): the one case where nothing leaves."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may be anywhere (never resolved here: that is a network look-up)


def where(cfg: ServerConfig) -> str:
    """The host answers are written on, or "" when it is this computer."""
    return "" if is_this_computer(cfg.host) else cfg.host


def privacy_note(cfg: ServerConfig) -> str:
    """What a person must know wherever the model is named."""
    host = where(cfg)
    if not host:
        return f"Answers are written by {cfg.model} on this computer (a model server at {cfg.url})."
    return f"Answers are written on {host}: the question and the passages are sent there."


# ---------------------------------------------------------------------- the list


def servers_file(models_dir: Path) -> Path:
    return Path(models_dir) / SERVERS_FILE


def list_servers(models_dir: Path) -> list[ServerConfig]:
    try:
        data = json.loads(servers_file(models_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    out = []
    for item in data.get("servers", []) if isinstance(data, dict) else []:
        try:
            out.append(ServerConfig(
                name=validate_name(str(item["name"])), url=normalize_url(str(item["url"])),
                model=str(item["model"]), context_length=int(item.get("context_length") or DEFAULT_CONTEXT),
                has_key=bool(item.get("has_key")), timeout=float(item.get("timeout") or 120.0),
                extra=dict(item.get("extra") or {}),
            ))
        except (KeyError, TypeError, ValueError, ModelError):
            continue  # a hand-edited entry that does not parse is left out, not fatal
    return sorted(out, key=lambda s: s.name.lower())


def get_server(models_dir: Path, name: str) -> ServerConfig | None:
    return next((s for s in list_servers(models_dir) if s.name == name), None)


def add_server(cfg: ServerConfig, models_dir: Path, *, api_key: str | None = None,
               clashes: Any = lambda name: False) -> ServerConfig:
    """Add or replace the server `cfg.name`. `clashes(name)` says a model folder has that name.
    With `api_key`, the key goes to the keyring (an empty string removes it)."""
    name = validate_name(cfg.name)
    if clashes(name):
        raise ModelError(f"a model named {name!r} is installed; choose another name for the server")
    if not cfg.model.strip():
        raise ModelError("choose the server's model (see the server's list of models)")
    has_key = cfg.has_key
    if api_key is not None:
        if api_key:
            store_api_key(name, api_key)
            has_key = True
        else:
            delete_api_key(name)
            has_key = False
    cfg = ServerConfig(name, normalize_url(cfg.url), cfg.model.strip(), int(cfg.context_length), has_key,
                       float(cfg.timeout), dict(cfg.extra))
    others = [s for s in list_servers(models_dir) if s.name != name]
    _write(models_dir, [*others, cfg])
    return cfg


def remove_server(models_dir: Path, name: str) -> bool:
    servers = list_servers(models_dir)
    kept = [s for s in servers if s.name != name]
    if len(kept) == len(servers):
        return False
    _write(models_dir, kept)
    try:
        delete_api_key(name)
    except ModelError:
        pass  # no keyring: there was no key to delete
    return True


def _write(models_dir: Path, servers: list[ServerConfig]) -> None:
    Path(models_dir).mkdir(parents=True, exist_ok=True)
    write_json_atomic(servers_file(models_dir), {"servers": [asdict(s) for s in servers]})


# ---------------------------------------------------------------------- API keys (the keyring)


def _keyring() -> Any:
    try:
        import keyring
        from keyring.errors import KeyringError  # noqa: F401 - the package is whole
    except ImportError as e:  # pragma: no cover - a dependency; a broken install
        raise ModelError("the keyring package is missing, so an API key cannot be kept") from e
    return keyring


def _user(name: str) -> str:
    return f"server:{name}"


def store_api_key(name: str, key: str) -> None:
    keyring = _keyring()
    try:
        keyring.set_password(KEYRING_SERVICE, _user(name), key)
    except Exception as e:  # noqa: BLE001 - every keyring backend fails its own way; one line for the user
        raise ModelError(f"the API key could not be kept in the system keyring: {e}") from e


def read_api_key(name: str) -> str | None:
    keyring = _keyring()
    try:
        return keyring.get_password(KEYRING_SERVICE, _user(name))
    except Exception as e:  # noqa: BLE001 - every keyring backend fails its own way; one line for the user
        raise ModelError(f"the API key could not be read from the system keyring: {e}") from e


def delete_api_key(name: str) -> None:
    keyring = _keyring()
    try:
        if keyring.get_password(KEYRING_SERVICE, _user(name)) is not None:
            keyring.delete_password(KEYRING_SERVICE, _user(name))
    except Exception as e:  # noqa: BLE001 - every keyring backend fails its own way; one line for the user
        raise ModelError(f"the API key could not be removed from the system keyring: {e}") from e
