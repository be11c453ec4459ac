"""EdgeChat: chat with your own documents, privately, on your own machine."""

__version__ = "0.1.0"
