/* ptx_float.h — PTX floating-point semantics (ptx_float.c). */
#ifndef NBCUDA_CPUDEVICE_PTX_FLOAT_H
#define NBCUDA_CPUDEVICE_PTX_FLOAT_H

#include <stdint.h>

#include "cpudevice/ptx.h"

float nbc__ptx_ftz32(float f);
/* add sub mul mad fma div sqrt rcp in f32 with rounding `rnd` and flags .ftz .sat .approx */
float nbc__ptx_f32_arith(int op, int rnd, int flags, float a, float b, float c);
double nbc__ptx_f64_arith(int op, int rnd, double a, double b, double c);
/* .rni .rzi .rmi .rpi */
double nbc__ptx_round_integral(int rnd, double v);
uint16_t nbc__ptx_f16_from(double v);
double nbc__ptx_f16_to(uint16_t h);
uint16_t nbc__ptx_bf16_from(double v);
double nbc__ptx_bf16_to(uint16_t h);
/* v rounded to f32 with rounding mode rnd (.rn .rz .rm .rp) */
float nbc__ptx_to_f32(int rnd, double v);
/* ex2 lg2 sin cos tanh rsqrt rcp sqrt of .approx */
double nbc__ptx_approx(int op, double a);

#endif
