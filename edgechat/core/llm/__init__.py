"""Local language models: building the default one, managing installed ones, downloading others,
and the chat client that runs them (onnxruntime-genai, in process, CPU).

Submodules are imported on demand: `genai_client` loads onnxruntime-genai, `build_smollm2`
needs the optional conversion extras (only while building), `download` only the standard
library.
"""
