#include "formats/gguf/ggmltype.h"

#include <array>

namespace ckptscope::gguf {

namespace {

// ggml.h (enum ggml_type), ggml-common.h (block layouts) and ggml.c
// (type_traits) at ggml-org/ggml d99724f2. Ids 4, 5 (Q4_2, Q4_3), 31-33
// (Q4_0_4_4…) and 36-38 (IQ4_NL_4_4…) were removed and stay undefined.
constexpr std::array<GgmlTypeInfo, 35> kTypes{{
    {0, "F32", 1, 4, true},         {1, "F16", 1, 2, true},         {2, "Q4_0", 32, 18, true},
    {3, "Q4_1", 32, 20, true},      {6, "Q5_0", 32, 22, true},      {7, "Q5_1", 32, 24, true},
    {8, "Q8_0", 32, 34, true},      {9, "Q8_1", 32, 36, false},     {10, "Q2_K", 256, 84, true},
    {11, "Q3_K", 256, 110, true},   {12, "Q4_K", 256, 144, true},   {13, "Q5_K", 256, 176, true},
    {14, "Q6_K", 256, 210, true},   {15, "Q8_K", 256, 292, true},   {16, "IQ2_XXS", 256, 66, true},
    {17, "IQ2_XS", 256, 74, true},  {18, "IQ3_XXS", 256, 98, true}, {19, "IQ1_S", 256, 50, true},
    {20, "IQ4_NL", 32, 18, true},   {21, "IQ3_S", 256, 110, true},  {22, "IQ2_S", 256, 82, true},
    {23, "IQ4_XS", 256, 136, true}, {24, "I8", 1, 1, true},         {25, "I16", 1, 2, true},
    {26, "I32", 1, 4, true},        {27, "I64", 1, 8, true},        {28, "F64", 1, 8, true},
    {29, "IQ1_M", 256, 56, true},   {30, "BF16", 1, 2, true},       {34, "TQ1_0", 256, 54, true},
    {35, "TQ2_0", 256, 66, true},   {39, "MXFP4", 32, 17, true},    {40, "NVFP4", 64, 36, true},
    {41, "Q1_0", 128, 18, true},    {42, "Q2_0", 64, 18, true},
}};

constexpr uint32_t kIdCount = 43; // GGML_TYPE_COUNT

// Index into kTypes per id; -1 where ggml defines none.
constexpr std::array<int8_t, kIdCount> kIndex = [] {
    std::array<int8_t, kIdCount> index{};
    index.fill(-1);
    for (size_t i = 0; i < kTypes.size(); ++i)
        index[kTypes[i].id] = static_cast<int8_t>(i);
    return index;
}();

} // namespace

const GgmlTypeInfo* ggmlType(uint32_t id) {
    if (id >= kIdCount || kIndex[id] < 0)
        return nullptr;
    return &kTypes[static_cast<size_t>(kIndex[id])];
}

std::span<const GgmlTypeInfo> ggmlTypes() {
    return kTypes;
}

} // namespace ckptscope::gguf
