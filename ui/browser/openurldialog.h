#pragma once

#include <QDialog>
#include <QStringList>

class QCheckBox;
class QLineEdit;

// File ▸ Open URL…: one address or several (the checkpoints of one run),
// and for s3:// whether the bucket is public: its requests then go unsigned
// whatever AWS credentials are set, as `aws s3 --no-sign-request` does.
class OpenUrlDialog : public QDialog {
    Q_OBJECT
public:
    OpenUrlDialog(QWidget* parent, const QString& initial);

    QStringList urls() const;
    bool publicBucket() const;

    // Asks; on OK marks (or unmarks) the s3:// buckets named as public and
    // returns the addresses; empty when cancelled.
    static QStringList ask(QWidget* parent, const QString& initial);

private:
    void updatePublicBox();

    QLineEdit* m_edit;
    QCheckBox* m_public;
};
