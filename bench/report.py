"""report.py — the benchmarks' output: markdown on stdout, and the same as JSON for
bench/results.py, which writes bench/RESULTS.md from it.

A benchmark makes one Report, adds sections (a title, paragraphs of text, a table given as its
column names and rows of cells already formatted as text) and writes the JSON with --json PATH:

    {"bench": "host_py", "command": "python3 bench/host_py.py --batches 15",
     "python": "3.12.3", "started": "2026-12-01T10:00:00+00:00", "finished": "...",
     "sections": [{"title": "...", "text": ["..."], "columns": ["..."],
                   "rows": [["..."]], "notes": ["..."]}],
     "data": {...}, "error": "..."}

Everything a table prints is in the JSON as the same text, so RESULTS.md shows exactly the
figures the run printed; `data` holds a benchmark's raw figures when it has some worth keeping.
Used as a context manager, the report is written even when the benchmark fails part-way, with
`error` saying how (results.py shows it), so one broken benchmark never hides the others.
"""
import datetime
import json
import os
import sys
import traceback


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def markdown_table(columns, rows):
    """The table as markdown lines: first column left-aligned, the others right-aligned
    unless `columns` marks them with a leading '<' (left)."""
    names = [c[1:] if c.startswith("<") else c for c in columns]
    align = ["---"] + ["---" if c.startswith("<") else "---:" for c in columns[1:]]

    def cell(v):
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(names) + " |", "|" + "|".join(align) + "|"]
    for r in rows:
        if len(r) != len(columns):
            raise ValueError(f"a row of {len(r)} cells in a table of {len(columns)} columns: {r}")
        lines.append("| " + " | ".join(cell(v) for v in r) + " |")
    return lines


class Report:
    def __init__(self, bench, json_path=None, out=sys.stdout):
        self.path = json_path
        self.out = out
        self.doc = {"bench": bench,
                    "command": " ".join(["python3", os.path.relpath(sys.argv[0])] + sys.argv[1:]),
                    "python": sys.version.split()[0], "started": _now(), "sections": []}

    def _print(self, text=""):
        print(text, file=self.out, flush=True)

    def section(self, title):
        """Starts a section: its title printed as a level-2 heading."""
        self.doc["sections"].append({"title": title, "text": [], "columns": None, "rows": [],
                                     "notes": []})
        self._print(f"## {title}\n")

    def _current(self):
        if not self.doc["sections"]:
            self.section(self.doc["bench"])
        return self.doc["sections"][-1]

    def text(self, paragraph):
        """A paragraph before the section's table (after it once the table is given)."""
        s = self._current()
        (s["notes"] if s["columns"] else s["text"]).append(paragraph)
        self._print(paragraph + "\n")

    def table(self, columns, rows):
        """The section's table; a column name starting with '<' is left-aligned."""
        s = self._current()
        if s["columns"]:
            raise ValueError(f"section {s['title']!r} has a table already")
        lines = markdown_table(columns, rows)  # checks the shape before anything is kept
        s["columns"], s["rows"] = list(columns), [[str(v) for v in r] for r in rows]
        self._print("\n".join(lines) + "\n")

    def data(self, key, value):
        self.doc.setdefault("data", {})[key] = value

    def write(self, error=None):
        self.doc["finished"] = _now()
        if error:
            self.doc["error"] = error
        if self.path:
            with open(self.path, "w") as f:
                json.dump(self.doc, f, indent=1, ensure_ascii=False)
                f.write("\n")

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        error = None
        if kind is not None and not issubclass(kind, SystemExit):
            error = "".join(traceback.format_exception_only(kind, value)).strip()
        elif kind is not None and value.code not in (0, None):
            error = f"exited with {value.code}"
        self.write(error)
        return False
