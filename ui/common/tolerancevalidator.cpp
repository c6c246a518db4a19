#include "common/tolerancevalidator.h"

#include "ckptscope/diff/elementdiff.h"

#include <QRegularExpression>

std::optional<double> ToleranceValidator::value(const QString& text) {
    const QString t = text.trimmed();
    if (t.isEmpty())
        return 0.0;
    return ckptscope::parseTolerance(t.toStdString());
}

QValidator::State ToleranceValidator::validate(QString& input, int&) const {
    if (value(input))
        return Acceptable;
    static const QRegularExpression partial(
        QStringLiteral("^\\s*[0-9]*\\.?[0-9]*([eE][+-]?[0-9]*)?\\s*$"));
    return partial.match(input).hasMatch() ? Intermediate : Invalid;
}
