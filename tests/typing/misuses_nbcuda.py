"""Calls the stubs must reject (tests/typing/check.py expects each line marked `# E:` to be
reported by mypy, and nothing else)."""
import nbcuda as cuda

cuda.profiling.range(3)  # E: arg-type
cuda.profiling.mark()  # E: call-arg
cuda.no_such_function()  # E: attr-defined
x: int = cuda.profiling.attached  # no error: bool is an int
