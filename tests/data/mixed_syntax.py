# A script mixing a kernel with syntax the kernel language lacks (Python 3.12's PEP 695
# aliases and generics, 3.12 f-strings, match, classes, lambdas, async, decorators):
# `nbcuda compile mixed_syntax.py:scale` compiles scale, which reaches only SCALE and math;
# the functions below it reach names that a statement nbcuda cannot parse defines
# (tests/c/cli_compile.cmake).
import math
from dataclasses import dataclass

type Vector = list[float]
type Pair[T] = tuple[T, T]

SCALE = 2.0


def describe(x):
    match x:
        case {"a": 1, **rest}:
            return rest
        case [1, *others]:
            return others
        case _:
            return None


def fmt(d):
    return f"{d["key"]!r:>{10}} and {'nested' + f'{d['k']}'}"


def generic[T](x: T) -> T:
    return x


class Thing[T]:
    pass


square = lambda v: v * v  # noqa: E731


async def fetch(lock, thing):
    async with lock:
        await thing()


@dataclass(frozen=True)
class Point:
    x: int = 0


def scale(a):
    i = 0
    a[i] = math.sqrt(a[i]) * SCALE


def uses_alias(a):
    a[0] = len(Vector)


def uses_generic(a):
    a[0] = generic(a[0])


def uses_describe(a):
    a[0] = describe(a)
