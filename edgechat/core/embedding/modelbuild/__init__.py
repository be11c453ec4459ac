"""Building models on the user's machine from downloaded weights (no torch at run time)."""

from edgechat.core.embedding.modelbuild.minilm import ModelBuildError, ensure_minilm, minilm_dir

__all__ = ["ModelBuildError", "ensure_minilm", "minilm_dir"]
