"""The language-model fixtures (smollm2_dir, client) live in tests/conftest.py."""
