# PyInstaller runtime hook (edgechat.spec, Linux): onnxruntime-genai runs on the onnxruntime that
# the onnxruntime Python module carries, so the bundle holds one onnxruntime (35 MB) instead of two.
#
# onnxruntime-genai dlopens <onnxruntime>/capi/libonnxruntime.so* and asks it for OrtGetApiBase.
# The wheel's Python module (onnxruntime_pybind11_state) has onnxruntime linked in statically and
# exports no C API, so in the bundle that file is ort_shim.c (15 KB): its OrtGetApiBase returns
# the API base that onnxruntime hands to a custom-op library when the library is registered.
# This hook registers the shim (which adds no operators) just before onnxruntime_genai is first
# imported, in every process of the app; the session options that hold it are kept for the life
# of the process, so the library stays loaded.
import glob
import os
import sys


class _SharedOnnxruntime:
    options = None

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "onnxruntime_genai" or cls.options is not None:
            return None
        sys.meta_path.remove(cls)
        try:
            import onnxruntime

            capi = os.path.join(os.path.dirname(onnxruntime.__file__), "capi")
            shim = sorted(glob.glob(os.path.join(capi, "libonnxruntime.so*")))[0]
            options = onnxruntime.SessionOptions()
            options.register_custom_ops_library(shim)
        except Exception as e:  # without the API base onnxruntime-genai cannot run: say why
            raise ImportError(f"onnxruntime for onnxruntime-genai: {e}") from e
        cls.options = options
        return None  # the bundle's own importer loads onnxruntime_genai


sys.meta_path.insert(0, _SharedOnnxruntime)
