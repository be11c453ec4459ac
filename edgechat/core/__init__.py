"""EdgeChat's core: no Qt anywhere in this package (tests/core/test_no_qt.py enforces it).

onnxruntime phones home unless ORT_DISABLE_TELEMETRY is set before it is imported, so the
variable is set here, before any submodule can import it.
"""

import os

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
