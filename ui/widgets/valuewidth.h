#pragma once

#include "ckptscope/formats/dtype.h"

class QWidget;

// Widths of value columns that fit every value of a dtype whole, as
// valueTexts (export/csvwriter.h) spells it, whatever the file holds: a
// column never depends on the values read, and no value is ever elided.
namespace valuewidth {

// Block types and the dtypes a float holds: fmt::exact of a float, at most
// 15 characters ("-d.dddddddde+dd", or "-0." and 12 digits). F64: of a
// double, 24. 32- and 64-bit integers: their digits and sign.
int ofDtype(const QWidget* view, ckptscope::Dtype dtype);
// fmt::exact of a double (a difference B − A): 24 characters.
int ofDouble(const QWidget* view);
// fmt::exactComplex of a pair of doubles (a complex B − A).
int ofComplexDouble(const QWidget* view);
// A row number up to `largest`.
int ofIndex(const QWidget* view, unsigned long long largest);

} // namespace valuewidth
