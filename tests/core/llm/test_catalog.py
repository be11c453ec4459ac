"""The catalog's default model: what scripts/setup.sh builds and makes active."""

from edgechat.core.llm.catalog import DEFAULT_MODEL, get_entry
from edgechat.core.llm.gguf_source import get_source


def test_the_default_model_is_a_catalog_entry_built_from_pinned_wheels():
    entry = get_entry(DEFAULT_MODEL)
    assert entry.name == DEFAULT_MODEL and entry.license == "Apache-2.0"
    source = get_source(entry.build)  # scripts/setup.sh builds it from this recipe
    assert source.parts and all(len(p.sha256) == 64 for p in source.parts) and len(source.gguf_sha256) == 64
    assert f"{source.key}-{source.default_precision}" == DEFAULT_MODEL  # the folder setup.sh activates
