// float16 <-> float conversion of whole blocks with the F16C instructions (vcvtph2ps /
// vcvtps2ph), for the CPU kernels' float16 paths. They give exactly the bits of
// NarrowFloat::ToFloat / FromFloat (round to nearest even, subnormals, inf, NaN with the quiet
// bit set and the top payload bits kept); f16c_test checks every float. Call them only when
// HasF16C() is true.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tutti::kernels::cpu {

// Whether this CPU has AVX2 and F16C (checked once), and the paths using them are enabled.
bool HasF16C();

// Tests turn the F16C paths off to exercise the portable ones on any CPU.
void SetF16CEnabledForTesting(bool enabled);

void HalfToFloatF16C(float* dst, const uint16_t* src, size_t count);
void FloatToHalfF16C(uint16_t* dst, const float* src, size_t count);

}  // namespace tutti::kernels::cpu
