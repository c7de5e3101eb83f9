"""results.py — writes bench/RESULTS.md from the machine-readable output of one benchmark run.

tests/gpu/run.sh's bench stage leaves in $OUT/bench/ (or /tmp/nbcuda-gpu/bench/):

  meta.json                  the run: {"date", "commit", "machine", "gpu", "driver", "cpu",
                             "host", "python"} (run.sh writes it; any key may be missing)
  host_calls.json            bench/host_calls.c --json (nbcuda's C API next to the raw driver)
  host_calls_reuse_off.json  the same with NBCUDA_REUSE=0
  <bench>.json               each Python benchmark's --json (bench/report.py's format)

and this script turns them into RESULTS.md: every table with the date, machine and commit of
the run that made it, the benchmark's command, its text and its notes, exactly as the run
printed them. A benchmark that failed part-way shows its error and what it had measured; an
unreadable or missing file is listed as such; nothing is invented or carried over from an
earlier RESULTS.md (the history of the figures is in git).

Usage: python3 bench/results.py DIR [-o bench/RESULTS.md] [--commit SHA] [--machine TEXT]
"""
import argparse
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import markdown_table  # noqa: E402

# The order of the benchmarks in RESULTS.md; any other report follows, by name.
ORDER = ["host_calls", "host_py", "launch_batch", "kernels", "compile_numba"]

# host_calls rows that time nbcuda's reuse when it is on (src/host/kept.c, reuse.c).
HOST_CALLS_REUSED = {
    "stream_create_destroy": "kept stream reused",
    "event_create_destroy": "kept event reused",
    "event_create_destroy_timing": "kept event reused",
    "alloc_htod_free_1k": "freed block reused",
    "alloc_free_1k": "freed block reused",
}


def load(path):
    """(parsed JSON, None) or (None, why)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, f"{type(e).__name__}: {e}"


def stamp(meta, started=None):
    """The run line every table carries: date, machine, commit."""
    date = started or meta.get("date") or "date unknown"
    machine = meta.get("machine") or "machine unknown"
    commit = meta.get("commit") or "commit unknown"
    return f"*Run {date} · {machine} · commit {commit}*"


def table_lines(columns, rows):
    """markdown_table, tolerant of a row of the wrong width (padded or cut, and said)."""
    fixed, bad = [], 0
    for r in rows:
        r = [str(c) for c in r]
        if len(r) != len(columns):
            bad += 1
            r = (r + ["–"] * len(columns))[:len(columns)]
        fixed.append(r)
    lines = markdown_table(columns, fixed)
    if bad:
        lines.append("")
        lines.append(f"({bad} row(s) had the wrong number of cells and were padded or cut.)")
    return lines


def host_calls_sections(on, off, meta):
    """Sections for bench/host_calls.c's two JSON runs (reuse on, reuse off); either may be
    None. Like-for-like rows come from the reuse-off run (every row the same driver calls on
    both sides); the reuse rows of the reuse-on run get a table of their own."""
    out = []
    base = off or on
    if base is None:
        return out
    title = "C host API — `bench/host_calls` (nbcuda's C call next to the raw driver call)"
    lines = [f"## {title}", "", stamp(meta, base.get("date")), ""]
    run = "NBCUDA_REUSE=0 " if off else ""
    lines.append(f"Command: `{run}build/gpu/tests/host_calls --json {base.get('batches', '')}`"
                 f" — {base.get('device', 'device unknown')}, driver {base.get('driver', '?')}, "
                 f"CUDA {base.get('cuda_version', '?')}; median of {base.get('batches', '?')} "
                 f"batches of {base.get('calls', '?')} calls (fewer for the costlier rows).")
    lines.append("")
    if off:
        lines.append("Every row makes the same driver calls on both sides: this run has "
                     "NBCUDA_REUSE=0, so nbcuda's creates, destroys, allocations and frees are "
                     "the driver's own.")
    else:
        lines.append("No reuse-off run was found: the rows marked \"reuse\" time nbcuda's kept "
                     "objects against real driver creates and are left out of this table.")
    lines.append("")
    rows = []
    for key, r in base.get("rows", {}).items():
        if not off and key in HOST_CALLS_REUSED:
            continue
        name = r.get("name", key) + (" (reuse off)" if off and key in HOST_CALLS_REUSED else "")
        rows.append(host_calls_row(name, r))
    lines += table_lines(["function", "nbcuda ns", "raw ns", "overhead ns", "<all calls ok"],
                         rows)
    out.append(lines)
    reused = [(k, r) for k, r in (on or {}).get("rows", {}).items() if k in HOST_CALLS_REUSED]
    if reused:
        lines = ["## C host API — nbcuda's reuse (`bench/host_calls`, reuse on)", "",
                 stamp(meta, on.get("date")), "",
                 "The same rows with nbcuda's default reuse: a create after a destroy takes the "
                 "kept stream or event, an allocation the freed block. The raw column is the "
                 "driver calls the reuse saves; saved = raw - nbcuda.", ""]
        rows = []
        for key, r in reused:
            nb, raw = r.get("nbcuda_ns"), r.get("raw_ns")
            saved = f"{raw - nb:+.1f}" if isinstance(nb, (int, float)) and \
                isinstance(raw, (int, float)) else "–"
            rows.append([f"{r.get('name', key)} ({HOST_CALLS_REUSED[key]})", num(nb), num(raw),
                         saved, "yes" if r.get("ok") else "NO"])
        lines += table_lines(["function", "nbcuda ns", "raw ns (calls saved)", "saved ns",
                              "<all calls ok"], rows)
        out.append(lines)
    return out


def num(v):
    return f"{v:.1f}" if isinstance(v, (int, float)) else "–"


def host_calls_row(name, r):
    nb, raw = r.get("nbcuda_ns"), r.get("raw_ns")
    over = f"{nb - raw:+.1f}" if isinstance(nb, (int, float)) and isinstance(raw, (int, float)) \
        else "–"
    return [name, num(nb), num(raw), over, "yes" if r.get("ok") else "NO"]


def report_sections(doc, meta):
    """Sections of one bench/report.py document."""
    out = []
    sections = doc.get("sections") or []
    if not sections:
        sections = [{"title": doc.get("bench", "?"), "text": ["(no output)"]}]
    for i, s in enumerate(sections):
        lines = [f"## {s.get('title') or doc.get('bench', '?')}", "",
                 stamp(meta, doc.get("started")), ""]
        if i == 0:
            lines += [f"Command: `{doc.get('command', '?')}` (Python {doc.get('python', '?')})",
                      ""]
        for t in s.get("text") or []:
            lines += [t, ""]
        if s.get("columns"):
            lines += table_lines(s["columns"], s.get("rows") or [])
            lines.append("")
        for t in s.get("notes") or []:
            lines += [t, ""]
        out.append(lines)
    if doc.get("error"):
        out[-1] += [f"**{doc.get('bench', '?')} failed part-way: {doc['error']}** — the "
                    "tables above hold what it measured before that.", ""]
    return out


def render(directory, commit=None, machine=None):
    meta, why = load(os.path.join(directory, "meta.json"))
    problems = []
    if meta is None:
        meta = {}
        problems.append(f"meta.json: {why}")
    if commit:
        meta["commit"] = commit
    if machine:
        meta["machine"] = machine
    if not meta.get("machine"):
        meta["machine"] = ", ".join(str(meta[k]) for k in ("gpu", "driver", "cpu") if meta.get(k))

    docs = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        name = os.path.basename(path)[:-5]
        if name == "meta":
            continue
        doc, why = load(path)
        if doc is None:
            problems.append(f"{name}.json: {why}")
            continue
        docs[name] = doc

    parts = []
    on, off = docs.pop("host_calls", None), docs.pop("host_calls_reuse_off", None)
    parts += host_calls_sections(on, off, meta)
    names = [n for n in ORDER if n in docs] + sorted(n for n in docs if n not in ORDER)
    for name in names:
        doc = docs[name]
        if not isinstance(doc, dict) or "sections" not in doc:
            problems.append(f"{name}.json: not a bench/report.py document")
            continue
        parts += report_sections(doc, meta)
    missing = (["host_calls"] if on is None and off is None else []) + \
        [n for n in ORDER[1:] if n not in names]

    head = ["# Benchmark results", "",
            "Generated by `bench/results.py` from the machine-readable output of one run of "
            "`tests/gpu/run.sh bench`; do not edit by hand (run it again). Each table says the "
            "date, machine and commit of the run that made it; how the figures moved over time "
            "is in git's history of this file.", ""]
    head.append(stamp(meta))
    head.append("")
    if missing:
        head += ["Not in this run: " + ", ".join(missing) + ".", ""]
    if problems:
        head += ["Unreadable output: " + "; ".join(problems) + ".", ""]
    body = []
    for lines in parts:
        body += lines
        if body and body[-1] != "":
            body.append("")
    text = "\n".join(head + body).rstrip("\n") + "\n"
    return text, missing, problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", help="the bench output folder ($OUT/bench)")
    ap.add_argument("-o", "--output", default=None,
                    help="where to write (default: bench/RESULTS.md of this checkout; - for "
                         "stdout)")
    ap.add_argument("--commit", help="the commit the run measured (overrides meta.json)")
    ap.add_argument("--machine", help="the machine, in words (overrides meta.json)")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.directory):
        ap.error(f"{args.directory} is not a folder")
    text, missing, problems = render(args.directory, args.commit, args.machine)
    out = args.output or os.path.join(os.path.dirname(os.path.abspath(__file__)), "RESULTS.md")
    if out == "-":
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"results.py: wrote {out}" + (f"; not in this run: {', '.join(missing)}"
                                            if missing else "")
              + (f"; unreadable: {'; '.join(problems)}" if problems else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
