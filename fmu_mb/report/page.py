"""One self-contained HTML page: a header, then plotly figures (plotly.js embedded once, no network)."""
from __future__ import annotations

import html
from pathlib import Path

STYLE = """
body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 1.5em auto; max-width: 1200px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table.meta td { padding: 0.1em 1em 0.1em 0; vertical-align: top; } .note { color: #555; font-size: 0.9em; }
.status-ok { color: #2a7d2a; } .status-bad { color: #b00020; font-weight: bold; }
table.runs { border-collapse: collapse; font-size: 0.85em; } table.runs td, table.runs th { border: 1px solid #ddd;
       padding: 0.2em 0.5em; }
"""


def render(title: str, meta: list, sections: list, path: Path) -> Path:
    """Write the page to ``path``. meta: [(label, text)]; sections: [(heading, [figure | html str], note)]."""
    import plotly.io as pio
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>", "<table class='meta'>"]
    for label, text in meta:
        cls = ""
        if label == "status":
            cls = " class='status-ok'" if text in ("ok", "warning") else " class='status-bad'"
        parts.append(f"<tr><td>{html.escape(label)}</td><td{cls}>{html.escape(str(text))}</td></tr>")
    parts.append("</table>")
    first = True
    for heading, items, note in sections:
        parts.append(f"<h2>{html.escape(heading)}</h2>")
        if note:
            parts.append(f"<p class='note'>{html.escape(note)}</p>")
        for item in items:
            if isinstance(item, str):
                parts.append(item)
                continue
            parts.append(pio.to_html(item, full_html=False, include_plotlyjs=first, auto_play=False,
                                     config={"displaylogo": False, "responsive": True}))
            first = False
    parts.append("</body></html>")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
