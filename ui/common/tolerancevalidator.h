#pragma once

#include <QValidator>

#include <optional>

// The compare window's atol and rtol fields: acceptable is what
// ckptscope::parseTolerance takes (a finite decimal >= 0, as `diff --atol`)
// and the empty field (0); a number still being typed ("1e", "0.") is
// intermediate; anything else is refused as typed.
class ToleranceValidator : public QValidator {
    Q_OBJECT
public:
    using QValidator::QValidator;
    State validate(QString& input, int& pos) const override;
    // The value of an acceptable text (empty: 0), or nothing.
    static std::optional<double> value(const QString& text);
};
