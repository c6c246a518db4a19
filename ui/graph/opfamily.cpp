#include "graph/opfamily.h"

#include <initializer_list>

namespace {

bool containsAny(const QString& op, std::initializer_list<const char*> words) {
    for (const char* w : words)
        if (op.contains(QLatin1String(w)))
            return true;
    return false;
}

} // namespace

OpFamily opFamily(const QString& opIn) {
    const QString op = opIn.toLower();
    // Order matters: "cross_entropy_loss" is a loss before anything else.
    if (containsAny(op, {"loss", "entropy", "nll", "mse"}))
        return OpFamily::Loss;
    if (containsAny(op, {"norm"}))
        return OpFamily::Normalisation;
    if (containsAny(op, {"matmul", "gemm", "linear", "conv", "bmm", "dot", "einsum", "attention"}))
        return OpFamily::MatMul;
    if (containsAny(op, {"relu", "gelu", "silu", "swish", "tanh", "sigmoid", "softmax", "elu",
                         "softplus", "mish"}))
        return OpFamily::Activation;
    if (containsAny(op, {"sum", "mean", "reduce", "max", "min", "prod", "argm"}))
        return OpFamily::Reduction;
    if (containsAny(op, {"add", "sub", "mul", "div", "pow", "exp", "log", "sqrt", "neg", "abs",
                         "sin", "cos", "residual", "scale", "clip"}))
        return OpFamily::Elementwise;
    return OpFamily::Other;
}

QString opFamilyName(OpFamily family) {
    switch (family) {
    case OpFamily::MatMul:
        return QStringLiteral("matmul");
    case OpFamily::Elementwise:
        return QStringLiteral("elementwise");
    case OpFamily::Activation:
        return QStringLiteral("activation");
    case OpFamily::Normalisation:
        return QStringLiteral("normalisation");
    case OpFamily::Reduction:
        return QStringLiteral("reduction");
    case OpFamily::Loss:
        return QStringLiteral("loss");
    case OpFamily::Other:
        break;
    }
    return QStringLiteral("data/other");
}

QColor opFamilyColor(OpFamily family) {
    switch (family) {
    case OpFamily::MatMul:
        return QColor(0x4e, 0x79, 0xa7);
    case OpFamily::Elementwise:
        return QColor(0x59, 0xa1, 0x4f);
    case OpFamily::Activation:
        return QColor(0xf2, 0x8e, 0x2b);
    case OpFamily::Normalisation:
        return QColor(0xb0, 0x7a, 0xa1);
    case OpFamily::Reduction:
        return QColor(0x76, 0xb7, 0xb2);
    case OpFamily::Loss:
        return QColor(0xe1, 0x57, 0x59);
    case OpFamily::Other:
        break;
    }
    return QColor(0x9c, 0x9c, 0x9c);
}
