"""The tables of docs/performance.md and README.md are rendered from docs/performance.json by
benchmarks/readme_table.py; nothing in them is typed in by hand. This fails when a file's tables
and the JSON disagree: run `python -m benchmarks.readme_table --update` and commit the result."""

from __future__ import annotations

import pytest

from benchmarks import readme_table


@pytest.mark.parametrize("path", [readme_table.PERFORMANCE_DOC, readme_table.README], ids=lambda p: p.name)
def test_tables_are_rendered_from_the_json(path):
    merged = readme_table.load(readme_table.PERFORMANCE_JSON)
    expected = readme_table.rendered(merged, [path])[path]
    assert path.read_text(encoding="utf-8") == expected, (
        f"{path.name}'s tables differ from docs/performance.json: run `python -m benchmarks.readme_table --update`"
    )


def test_the_user_table_gives_the_figures_a_user_asks_about():
    table = readme_table.render_user_table(readme_table.load(readme_table.PERFORMANCE_JSON))
    for what in ("Indexing (", "first word of the answer", "Memory while answering", "docs/performance.md"):
        assert what in table
