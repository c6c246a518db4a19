#pragma once

// Codebooks of ggml's quantized types: format constants, taken as data from
// ggml-org/ggml (src/ggml-common.h, as used by src/ggml-quants.c) at commit
// d99724f2b141fed9e1a9f402213506c081433465.
//
// MIT License
//
// Copyright (c) 2023-2026 The ggml authors
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

#include <cstdint>

namespace ckptscope::gguf {

// ggml's ksigns_iq2xs: sign bytes of 7-bit sign codes (IQ2_*, IQ3_XXS).
extern const uint8_t kSignsIq2xs[128];
// ggml's iq2xxs_grid: IQ2_XXS: 8 magnitudes per entry, one per byte.
extern const uint64_t kIq2xxsGrid[256];
// ggml's iq2xs_grid: IQ2_XS.
extern const uint64_t kIq2xsGrid[512];
// ggml's iq2s_grid: IQ2_S.
extern const uint64_t kIq2sGrid[1024];
// ggml's iq3xxs_grid: IQ3_XXS: 4 magnitudes per entry.
extern const uint32_t kIq3xxsGrid[256];
// ggml's iq3s_grid: IQ3_S.
extern const uint32_t kIq3sGrid[512];
// ggml's kvalues_iq4nl: IQ4_NL, IQ4_XS: the 16 levels.
extern const int8_t kValuesIq4nl[16];
// ggml's kvalues_fp4: MXFP4, NVFP4: E2M1 values doubled (kvalues_mxfp4).
extern const int8_t kValuesFp4[16];
// ggml's iq1s_grid: IQ1_S, IQ1_M: 8 signed bytes (-1, 0, 1) per entry.
extern const uint64_t kIq1sGrid[2048];

} // namespace ckptscope::gguf
