# PyInstaller runtime hook (edgechat.spec): grpc is left out of the bundle (17 MB).
#
# Chroma imports OpenTelemetry's gRPC span exporter at the top of chromadb.telemetry.opentelemetry,
# which both the local store (PersistentClient) and team libraries (HttpClient) import, and that
# module imports grpc. The exporter is only built when Chroma's tracing is switched on
# (CHROMA_OTEL_GRANULARITY with a collection endpoint), which EdgeChat never does: its spans
# would go to another machine. So the import is answered with a stand-in whose exporter refuses
# to be made, and grpc is not needed. This finder comes last: a real exporter, where there is
# one, is still found first.
import importlib.abc
import importlib.machinery
import sys

_PACKAGE = "opentelemetry.exporter.otlp.proto.grpc"
_MODULE = _PACKAGE + ".trace_exporter"
# the namespace packages above it, which are empty in the bundle without it
_PACKAGES = ("opentelemetry.exporter", "opentelemetry.exporter.otlp", "opentelemetry.exporter.otlp.proto", _PACKAGE)


class _OTLPSpanExporter:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("this EdgeChat bundle has no OpenTelemetry gRPC exporter (grpc is left out)")


class _NoGrpcExporter(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name in _PACKAGES or name == _MODULE:
            return importlib.machinery.ModuleSpec(name, self, is_package=name != _MODULE)
        return None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == _MODULE:
            module.OTLPSpanExporter = _OTLPSpanExporter


sys.meta_path.append(_NoGrpcExporter())
