#include "common/sizeformat.h"

#include "ckptscope/common/numberformat.h"

namespace fmt = ckptscope::fmt;

static QString utf8(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString humanBytes(uint64_t bytes) {
    return utf8(fmt::bytes(bytes));
}

QString groupedNumber(uint64_t n) {
    return utf8(fmt::grouped(n));
}

QString shapeText(const std::vector<uint64_t>& shape) {
    return utf8(fmt::shape(shape));
}

QString numberText(std::optional<double> v) {
    return v ? utf8(fmt::figure(*v)) : missingText();
}

QString missingText() {
    return QString::fromUtf8(ckptscope::fmt::kMissing.data(),
                             qsizetype(ckptscope::fmt::kMissing.size()));
}
