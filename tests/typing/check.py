"""Type-checks tests/typing/*.py with mypy against the nbcuda installed in this interpreter
(its stubs and py.typed, as a user's checker finds them): uses_nbcuda.py must check clean,
and misuses_nbcuda.py must give exactly the errors its `# E: code` comments name, line by
line. Run by tests/run_all.sh's wheel stage in the wheel's venv; exit status 1 on a mismatch."""
import os
import re
import sys

from mypy import api

HERE = os.path.dirname(os.path.abspath(__file__))


def run(name):
    out, err, status = api.run(["--no-incremental", "--show-error-codes",
                                "--ignore-missing-imports", "--follow-imports=silent",
                                "--python-executable", sys.executable,
                                os.path.join(HERE, name)])
    return out, err, status


def expected(name):
    want = set()
    with open(os.path.join(HERE, name)) as f:
        for number, line in enumerate(f, 1):
            m = re.search(r"#\s*E:\s*([\w-]+)", line)
            if m:
                want.add((number, m.group(1)))
    return want


def main():
    failures = []
    out, err, status = run("uses_nbcuda.py")
    if status != 0:
        failures.append(f"uses_nbcuda.py should check clean:\n{out}{err}")
    out, err, _ = run("misuses_nbcuda.py")
    got = {(int(m.group(1)), m.group(2))
           for m in re.finditer(r"misuses_nbcuda\.py:(\d+): error: .*\[([\w-]+)\]", out)}
    want = expected("misuses_nbcuda.py")
    if got != want:
        failures.append(f"misuses_nbcuda.py: expected {sorted(want)}, mypy said {sorted(got)}:"
                        f"\n{out}{err}")
    for f in failures:
        print(f)
    if not failures:
        print(f"typing: ok ({len(want)} misuses caught, the clean program passes)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
