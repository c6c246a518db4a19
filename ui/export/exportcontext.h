#pragma once

#include "ckptscope/document/document.h"

#include <QString>

#include <memory>

class QTreeView;
class QWidget;
class TensorPage;
class TensorValuesView;

// What ExportActions may see of the window it serves: the open document,
// the views holding the selections it exports (the tensor tree's current
// tensor, the histogram shown, the Values page's selected cells), a parent
// for its dialogs and a place for its status messages. MainWindow
// implements it; export never depends on the window class.
class ExportContext {
public:
    virtual ~ExportContext() = default;

    virtual std::shared_ptr<const ckptscope::Document> document() const = 0;
    virtual QString currentPath() const = 0; // names the suggested files
    virtual QTreeView* tensorTree() const = 0;
    virtual TensorPage* tensorPage() const = 0;
    virtual TensorValuesView* valuesView() const = 0;
    virtual QWidget* dialogParent() = 0;
    virtual void showStatus(const QString& message, int timeoutMs) = 0;
};
