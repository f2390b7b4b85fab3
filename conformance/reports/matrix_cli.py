"""``python -m conformance matrix REPORT.json... --html OUT [--markdown OUT]``:
the matrix (``matrix``) and, below it, what changed between neighbouring
columns (``matrix_changes``), from the reports, in both formats."""
from __future__ import annotations

import sys

from conformance.reports import matrix, matrix_changes, report


def main(args) -> int:
    try:
        docs = [report.load(p) for p in args.reports]
    except (OSError, ValueError, KeyError) as exc:
        print(f"matrix: {exc}", file=sys.stderr)
        return 2
    page = matrix.render_html(docs, args.reports)
    with open(args.html, "w") as f:
        f.write(page.replace("</body>", matrix_changes.render_html(docs) + "</body>", 1))
    print(f"matrix: {args.html}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(matrix.render_markdown(docs)
                    + "".join(line + "\n" for line in matrix_changes.render_markdown(docs)))
        print(f"matrix: {args.markdown}")
    return 0
