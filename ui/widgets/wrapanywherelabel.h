#pragma once

#include <QLabel>

class QTextDocument;

// A label whose text wraps anywhere a word is wider than the line (a tensor
// name has no spaces): shown whole at any width, and never wider than its
// layout gives it. QLabel wraps at spaces only, so a 300-character name set
// its minimum width and widened the window past the screen. Plain or rich
// text, as textFormat() says; Copy in its context menu takes the whole text.
class WrapAnywhereLabel : public QLabel {
    Q_OBJECT
public:
    explicit WrapAnywhereLabel(QWidget* parent = nullptr);

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;
    // The text as shown, without markup.
    QString plainText() const;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    void fill(QTextDocument& doc) const;
};
