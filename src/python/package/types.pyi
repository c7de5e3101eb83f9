# Type stubs of the nbcuda extension module (src/python/), checked against the module by
# tests/python/test_signatures.py.
from abc import ABCMeta
from typing import Any

class Array(Type):
    def __init__(self, dtype: Any, ndim: Any, layout: Any, readonly: Any = False, name: Any = None, aligned: Any = True) -> None: ...

class Tuple(Type):
    def __init__(self, types: Any) -> None: ...
    def __getitem__(self, key: Any, /) -> Any: ...
    @property
    def count(self) -> Any: ...
    @property
    def types(self) -> Any: ...

class Type:
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __getitem__(self, key: Any, /) -> Any: ...
    def __init__(self, name: Any) -> None: ...
    @property
    def args(self) -> Any: ...
    @property
    def bitwidth(self) -> Any: ...
    @property
    def dtype(self) -> Any: ...
    @property
    def layout(self) -> Any: ...
    @property
    def name(self) -> Any: ...
    @property
    def ndim(self) -> Any: ...
    @property
    def return_type(self) -> Any: ...
    @property
    def signature_text(self) -> Any: ...
    @property
    def underlying_float(self) -> Any: ...

class UniTuple(Type):
    def __init__(self, dtype: Any, count: Any) -> None: ...
    def __getitem__(self, key: Any, /) -> Any: ...
    @property
    def count(self) -> Any: ...
    @property
    def types(self) -> Any: ...

def CPointer(dtype: Any, /) -> Any: ...
b1: Type
bfloat16: Type
bool: Type
bool_: Type
boolean: Type
byte: Type
c16: Type
c8: Type
char: Type
complex128: Type
complex64: Type
double: Type
f2: Type
f4: Type
f8: Type
float16: Type
float32: Type
float64: Type
float_: Type
def from_dtype(dtype: Any, /) -> Any: ...
i1: Type
i2: Type
i4: Type
i8: Type
int16: Type
int32: Type
int64: Type
int8: Type
int_: Type
intc: Type
intp: Type
long_: Type
longlong: Type
none: Type
short: Type
size_t: Type
ssize_t: Type
u1: Type
u2: Type
u4: Type
u8: Type
uchar: Type
uint: Type
uint16: Type
uint32: Type
uint64: Type
uint8: Type
uintc: Type
uintp: Type
ulong: Type
ulonglong: Type
ushort: Type
void: Type
