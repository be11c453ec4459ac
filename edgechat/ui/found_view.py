"""The "How this was found" view of one answer: how the question was searched, what came
back, what was chosen, and how long each stage took. Reads the plain record made by
edgechat.core.search.pipeline.how_found(), so it also works for answers of reopened chats."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget


def _fmt(v: Any) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.3f}"
    return html.escape(str(v))


def _table(rows: list[dict[str, Any]], chosen: set[str]) -> str:
    if not rows:
        return "<p><i>none</i></p>"
    out = ["<table cellspacing='0' cellpadding='3' border='1' style='border-collapse:collapse'>",
           "<tr><th>#</th><th>Document</th><th>Page</th><th>Score</th><th>Meaning rank (cos)</th>"
           "<th>Keyword rank (BM25)</th><th>Rerank</th></tr>"]
    for i, r in enumerate(rows, 1):
        mark = " ✓" if r.get("chunk_id") in chosen else ""
        title = html.escape(r.get("title") or Path(r.get("path") or "").name)
        vec = "–" if r.get("vector_rank") is None else f"{r['vector_rank']} ({_fmt(r.get('vector_score'))})"
        lex = "–" if r.get("lexical_rank") is None else f"{r['lexical_rank']} ({_fmt(r.get('lexical_score'))})"
        out.append(f"<tr><td>{i}{mark}</td><td>{title}</td><td>{_fmt(r.get('page'))}</td>"
                   f"<td>{_fmt(r.get('score'))}</td><td>{vec}</td><td>{lex}</td><td>{_fmt(r.get('rerank_score'))}</td></tr>")
    out.append("</table>")
    return "".join(out)


def found_html(found: dict[str, Any] | None) -> str:
    if not found:
        return "<p>No search record was kept for this answer.</p>"
    parts = ["<h3>The question as searched</h3>"]
    if found.get("search_skipped"):
        reason = html.escape(found.get("skip_reason") or "not a question about the documents")
        parts.append(f"<p><b>Search skipped</b>: {reason}. The answer is not from your documents.</p>")
    else:
        q = html.escape(found.get("searched_query") or "")
        parts.append(f"<p>Meaning search: <b>{q}</b>"
                     + (" <i>(rewritten from the conversation)</i>" if found.get("rewritten") else "") + "</p>")
        kws = ", ".join(html.escape(k) for k in found.get("keywords") or []) or "<i>the question's own words</i>"
        parts.append(f"<p>Keyword search: {kws}</p>")
        chosen = {s.get("chunk_id") for s in found.get("sources") or []}
        parts.append("<h3>Candidates (best first; ✓ = used as a source)</h3>")
        parts.append(_table(found.get("candidates") or [], chosen))
        if found.get("reranked"):
            parts.append("<h3>After reranking</h3>")
            parts.append(_table(found["reranked"], chosen))
        else:
            parts.append("<p>No reranker ran: the candidates keep their fused order.</p>")
        passed = found.get("passed_over_for_diversity") or []
        if passed:
            parts.append(f"<p>{len(passed)} near-duplicate passage(s) were passed over so the sources cover more.</p>")
        parts.append("<h3>Sources given to the answer</h3><ul>")
        for s in found.get("sources") or []:
            parts.append(f"<li>[{s.get('number')}] {html.escape(str(s.get('title')))}, page {_fmt(s.get('page'))}, "
                         f"score {_fmt(s.get('score'))}</li>")
        parts.append("</ul>")
    timings = found.get("timings_ms") or {}
    if timings:
        parts.append("<h3>Time per stage</h3><table cellpadding='2'>")
        for k, v in timings.items():
            parts.append(f"<tr><td>{html.escape(k)}</td><td align='right'>{v:.1f} ms</td></tr>")
        parts.append("</table>")
    return "".join(parts)


class FoundDialog(QDialog):
    def __init__(self, found: dict[str, Any] | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("How this was found")
        self.resize(720, 560)
        self.browser = QTextBrowser(self)
        self.browser.setHtml(found_html(found))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, parent=self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
