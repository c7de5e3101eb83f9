import math
from numba import cuda
from numba.cuda import float32, int16, int32, int64, uint16, uint32, uint64, float64
from numba.cuda.bf16 import bfloat16, hadd, hmul, hfma, habs, hneg, heq, hlt, hmax, hsqrt, hisnan, float2bfloat16, bfloat16_as_int16, int16_as_bfloat16, hexp10

def k_ops(out, flags):
    a = bfloat16(1.25)
    b = bfloat16(-2.5)
    out[0] = float32(a + b)
    out[1] = float32(a - b)
    out[2] = float32(a * b)
    out[3] = float32(b / a)
    out[4] = float32(-a)
    out[5] = float32(+b)
    c = a
    c += b
    out[6] = float32(c)
    out[7] = a + 1.0          # float64
    out[8] = a * int16(3)     # float32
    out[9] = float32(a * int32(3))  # float64
    flags[0] = a == b
    flags[1] = a != b
    flags[2] = a < b
    flags[3] = a >= b
    flags[4] = a > 0.5
    flags[5] = bool(a)
    if b:
        flags[6] = True

def k_funcs(out, ints):
    x = bfloat16(3.14)
    out[0] = float32(hadd(x, x))
    out[1] = float32(hfma(x, x, x))
    out[2] = float32(habs(hneg(x)))
    out[3] = float32(hmax(x, bfloat16(2)))
    out[4] = float32(hsqrt(x))
    out[5] = float32(math.sqrt(x))
    out[6] = float32(math.floor(x))
    out[7] = math.fabs(x)
    out[8] = float32(hexp10(x))
    out[9] = float32(float2bfloat16(float32(2.7)))
    ints[0] = int16(x)
    ints[1] = int32(bfloat16(-7.9))
    ints[2] = int64(bfloat16(100000.0))
    ints[3] = bfloat16_as_int16(x)
    ints[4] = int64(heq(x, x)) + int64(hlt(x, x)) * 2 + int64(hisnan(x)) * 4
    ints[5] = uint32(bfloat16(uint16(7)))
    ints[6] = int64(float64(int16_as_bfloat16(int16(16457))))
    ints[7] = round(x)
