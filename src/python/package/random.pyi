# Type stubs of the nbcuda extension module (src/python/), checked against the module by
# tests/python/test_signatures.py.
from abc import ABCMeta
from typing import Any

def create_xoroshiro128p_states(n: Any, seed: Any, subsequence_start: Any = 0, stream: Any = 0) -> Any: ...
init_xoroshiro128p_state: Any
def init_xoroshiro128p_states(states: Any, seed: Any, subsequence_start: Any = 0, stream: Any = 0) -> Any: ...
rotl: Any
uint64_to_unit_float32: Any
uint64_to_unit_float64: Any
xoroshiro128p_jump: Any
xoroshiro128p_next: Any
xoroshiro128p_normal_float32: Any
xoroshiro128p_normal_float64: Any
xoroshiro128p_uniform_float32: Any
xoroshiro128p_uniform_float64: Any
xoroshiro128p_dtype: Any
xoroshiro128p_type: Any
