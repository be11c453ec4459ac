"""Local language models: building the default one, managing installed ones, downloading others,
and the chat client that runs them (onnxruntime-genai, in process, CPU).

    client.py           `ChatClient`, the interface the answerer talks to
    genai_client.py     `GenaiChatClient`: an onnxruntime-genai model folder as a ChatClient
    folders.py          model folders: names, manifest file tables, atomic JSON, install by rename
    catalog.py          stronger models a user may download
    build_smollm2.py    builds the default model, SmolLM2-135M-Instruct, from a PyPI wheel
    manager.py          what is installed and which model is active; import, remove, install_default
    download.py         resumable HTTP downloads, and installing a catalog model
    install_smollm2.py  `python -m edgechat.core.llm.install_smollm2`: build and activate the default

Imports go one way: a module imports only modules listed above it (build_smollm2, manager and
download share folders; the manager calls the builder; download and install_smollm2 use the
manager).

Submodules are imported on demand: `genai_client` loads onnxruntime-genai (only when a model is
checked or used), `build_smollm2` needs the optional conversion extras (only while building),
`download` only the standard library.
"""
