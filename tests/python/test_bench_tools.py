"""The tools behind the published figures, checked without a GPU: bench/report.py's JSON,
bench/results.py writing RESULTS.md from a run's output (synthetic here; the GPU machine's
run.sh bench stage makes the real one), bench/kernels.py's result comparison, and
tests/gpu/numba_suite.py's record of numba-cuda fallbacks. Each runs in a subprocess, since
the scripts import modules (cupy, numba) that are stand-ins here."""
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "bench")


def run(code, cwd=BENCH):
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_report_writes_its_tables_and_an_error_part_way(tmp_path):
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {BENCH!r})
        from report import Report
        with Report("demo", {str(out)!r}) as r:
            r.section("First")
            r.text("Before the table.")
            r.table(["op", "<kind", "µs"], [["a|b", "x", "1.00"]])
            r.text("After the table.")
            r.section("Second")
            try:
                r.table(["op"], [["1", "2"]])
            except ValueError as e:
                print("refused:", e)
            raise RuntimeError("the GPU went away")
    """)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "refused: a row of 2 cells in a table of 1 columns" in p.stdout
    doc = json.loads(out.read_text())
    s = doc["sections"][0]
    assert s["title"] == "First" and s["text"] == ["Before the table."]
    assert s["columns"] == ["op", "<kind", "µs"] and s["rows"] == [["a|b", "x", "1.00"]]
    assert s["notes"] == ["After the table."]
    assert doc["error"] == "RuntimeError: the GPU went away"
    assert "| a\\|b | x | 1.00 |" in p.stdout and "|---|---|---:|" in p.stdout


def _host_calls(reuse_on):
    rows = {
        "current_context": {"name": "nbc_current_context(-1)", "nbcuda_ns": 12.0,
                            "raw_ns": 10.0, "ok": True},
        "stream_create_destroy": {"name": "nbc_stream_create + destroy",
                                  "nbcuda_ns": 300.0 if reuse_on else 5100.0,
                                  "raw_ns": 5000.0, "ok": True},
    }
    return {"device": "NVIDIA H200", "driver": "libcuda.so.1", "cuda_version": 13000,
            "batches": 201, "calls": 200, "rows": rows}


def test_results_writes_every_table_with_its_run(tmp_path):
    d = tmp_path / "bench"
    d.mkdir()
    (d / "meta.json").write_text(json.dumps({"date": "2026-12-07T10:00:00+00:00",
                                             "commit": "abc1234", "gpu": "NVIDIA H200",
                                             "driver": "580.1", "cpu": "Xeon"}))
    (d / "host_calls.json").write_text(json.dumps(_host_calls(True)))
    (d / "host_calls_reuse_off.json").write_text(json.dumps(_host_calls(False)))
    (d / "host_py.json").write_text(json.dumps({
        "bench": "host_py", "command": "python3 bench/host_py.py --batches 15",
        "python": "3.12.3", "started": "2026-12-07T10:05:00+00:00",
        "sections": [{"title": "Python host API", "text": ["Intro."],
                      "columns": ["operation", "nbcuda µs"],
                      "rows": [["launch, no args", "3.27"], ["short row"]],
                      "notes": ["Summary."]}],
        "error": "KeyboardInterrupt"}))
    (d / "kernels.json").write_text("{not json")
    out = tmp_path / "RESULTS.md"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "results.py"), str(d), "-o",
                        str(out)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    stamp_c = "*Run 2026-12-07T10:00:00+00:00 · NVIDIA H200, 580.1, Xeon · commit abc1234*"
    stamp_py = "*Run 2026-12-07T10:05:00+00:00 · NVIDIA H200, 580.1, Xeon · commit abc1234*"
    # like-for-like C rows come from the reuse-off run, the reuse rows have their own table
    assert "| nbc_stream_create + destroy (reuse off) | 5100.0 | 5000.0 | +100.0 | yes |" in text
    assert ("| nbc_stream_create + destroy (kept stream reused) | 300.0 | 5000.0 | +4700.0 | "
            "yes |") in text
    assert text.count(stamp_c) == 3 and text.count(stamp_py) == 1  # head + two C tables
    assert "Command: `python3 bench/host_py.py --batches 15` (Python 3.12.3)" in text
    assert "| launch, no args | 3.27 |" in text and "| short row | – |" in text
    assert "(1 row(s) had the wrong number of cells and were padded or cut.)" in text
    assert "**host_py failed part-way: KeyboardInterrupt**" in text
    assert "Unreadable output: kernels.json: JSONDecodeError" in text
    assert "Not in this run: launch_batch, kernels, compile_numba." in text
    # the C tables come first, then the Python ones, in ORDER
    assert text.index("C host API") < text.index("Python host API")


def test_results_without_meta_or_reuse_off_run_says_so(tmp_path):
    d = tmp_path / "bench"
    d.mkdir()
    (d / "host_calls.json").write_text(json.dumps(_host_calls(True)))
    p = subprocess.run([sys.executable, os.path.join(BENCH, "results.py"), str(d), "-o", "-",
                        "--commit", "f00ba44"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "commit f00ba44" in p.stdout and "Unreadable output: meta.json" in p.stdout
    # without a reuse-off run the reuse rows never sit among the like-for-like ones
    like = p.stdout[:p.stdout.index("nbcuda's reuse")]
    assert "nbc_stream_create" not in like and "nbc_current_context(-1)" in like


def test_kernels_compares_every_written_array(tmp_path):
    """bench/kernels.py's same_results: out and inout arrays are compared; a case with none
    is a loud NO, never a "yes"."""
    stub = tmp_path / "cupy.py"
    stub.write_text("import numpy\nasnumpy = numpy.asarray\nasarray = numpy.asarray\n")
    out = run(f"""
        import sys
        sys.path.insert(0, {str(tmp_path)!r})
        import numpy as np
        import kernels
        a, b = np.arange(4.0), np.arange(4.0)
        c = b + 1
        host = lambda *roles: [(r, "float64", None) for r in roles]
        print(kernels.same_results(host("inout", "scalar"), [a, 1.0], [b, 1.0]))
        print(kernels.same_results(host("inout", "scalar"), [a, 1.0], [c, 1.0]))
        print(kernels.same_results(host("out", "in", "inout"), [a, a, a], [b, c, b]))
        print(kernels.same_results(host("in", "scalar"), [a, 1.0], [c, 1.0]))
    """)
    assert out.splitlines() == ["('yes (1 array)', True)", "('NO (1 of 1 arrays differ)', False)",
                                "('yes (2 arrays)', True)", "('NO (nothing compared)', False)"]


def test_numba_suite_counts_tests_passed_with_and_without_fallbacks(tmp_path):
    """numba_suite.py's two figures: a passed test that used numba-cuda's own implementation
    (a name the bound module answered from numba-cuda, or numba-cuda code a test module
    imported) is not counted as passed on nbcuda alone, and the names are listed."""
    pkg = tmp_path / "numba" / "cuda"
    (pkg / "tests" / "cudapy").mkdir(parents=True)
    (pkg / "cudadrv").mkdir()
    for d in (tmp_path / "numba", pkg, pkg / "tests", pkg / "tests" / "cudapy", pkg / "cudadrv"):
        (d / "__init__.py").write_text("")
    (pkg / "cudadrv" / "driver.py").write_text("class Driver:\n    pass\n")
    (pkg / "tests" / "cudapy" / "test_plain.py").write_text(textwrap.dedent("""
        import unittest
        import numba_suite
        class T(unittest.TestCase):
            def test_alone(self):
                pass
            def test_fallback(self):
                numba_suite.FALLBACKS.record("numba.cuda.some_helper")
            def test_fails(self):
                self.fail("no")
            @unittest.skip("why")
            def test_skipped(self):
                pass
    """))
    (pkg / "tests" / "cudapy" / "test_imports_driver.py").write_text(textwrap.dedent("""
        import unittest
        from numba.cuda.cudadrv.driver import Driver
        from numba.cuda.tests import cudapy  # numba-cuda's tests: not a fallback
        class T(unittest.TestCase):
            def test_one(self):
                pass
    """))
    out = run(f"""
        import sys
        # where numba-cuda is installed, its .pth file adds an import hook sending numba.cuda
        # to the real package: the stand-in package here must be the only numba
        sys.meta_path[:] = [f for f in sys.meta_path if "numba" not in type(f).__module__]
        sys.path[:0] = [{str(tmp_path)!r}, {os.path.join(ROOT, "tests", "gpu")!r}]
        import numba_suite
        sys.modules["numba_suite"] = numba_suite
        total = numba_suite.run_modules(["test_plain", "test_imports_driver"], False)
        print("\\n".join(numba_suite.fallback_lines(total)))
    """)
    lines = out.splitlines()
    assert "| test_plain | 4 | 2 | 1 | 1 | 1 | 0 | 1 |" in lines
    assert "| test_imports_driver | 1 | 1 | 0 | 1 | 0 | 0 | 0 |" in lines
    assert ("passed on nbcuda alone: 1 of 5; passed with numba-cuda fallbacks: 2 (of the 3 "
            "passed)") in lines
    assert "  numba.cuda.cudadrv.driver.Driver: 1" in lines
    assert "  numba.cuda.some_helper: 1" in lines
