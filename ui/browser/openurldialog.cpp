#include "browser/openurldialog.h"

#include "ckptscope/io/httpsource.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QRegularExpression>
#include <QVBoxLayout>

namespace {

// The bucket of an s3:// address; empty for any other.
std::string bucketOf(const QString& url) {
    if (!ckptscope::isS3Url(url.toStdString()))
        return {};
    const QString rest = url.mid(5);
    return rest.left(rest.indexOf(QLatin1Char('/'))).toStdString();
}

} // namespace

OpenUrlDialog::OpenUrlDialog(QWidget* parent, const QString& initial)
    : QDialog(parent), m_edit(new QLineEdit(initial, this)),
      m_public(new QCheckBox(tr("Public bucket: send s3:// requests unsigned"), this)) {
    setWindowTitle(tr("Open URL"));
    auto* label = new QLabel(
        tr("The http://, https:// or s3:// address of a checkpoint, or of an s3:// prefix (a "
           "sharded model, a DCP or DeepSpeed folder, a training run). s3:// requests are signed "
           "with the credentials the AWS CLI would use. Only headers are read now; values are "
           "fetched when shown. Several addresses (separated by spaces) open as the checkpoints "
           "of one run."),
        this);
    label->setWordWrap(true);
    m_edit->setObjectName(QStringLiteral("urlEdit"));
    m_edit->setMinimumWidth(480);
    m_public->setObjectName(QStringLiteral("publicBucket"));
    m_public->setToolTip(tr("For a bucket anyone may read: no AWS credentials are sent, as with "
                            "aws s3 --no-sign-request."));
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_edit, &QLineEdit::textChanged, this, &OpenUrlDialog::updatePublicBox);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(label);
    layout->addWidget(m_edit);
    layout->addWidget(m_public);
    layout->addWidget(buttons);
    updatePublicBox();
}

QStringList OpenUrlDialog::urls() const {
    return m_edit->text().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
}

bool OpenUrlDialog::publicBucket() const {
    return m_public->isChecked();
}

// The box applies to s3:// addresses only, and shows what was chosen for
// the bucket before.
void OpenUrlDialog::updatePublicBox() {
    bool s3 = false, known = false;
    for (const QString& url : urls())
        if (const std::string bucket = bucketOf(url); !bucket.empty()) {
            s3 = true;
            known = known || ckptscope::isPublicBucket(bucket);
        }
    m_public->setEnabled(s3);
    if (s3 && known)
        m_public->setChecked(true);
}

QStringList OpenUrlDialog::ask(QWidget* parent, const QString& initial) {
    OpenUrlDialog dialog(parent, initial);
    if (dialog.exec() != QDialog::Accepted)
        return {};
    for (const QString& url : dialog.urls())
        if (const std::string bucket = bucketOf(url); !bucket.empty())
            ckptscope::setPublicBucket(bucket, dialog.publicBucket());
    return dialog.urls();
}
