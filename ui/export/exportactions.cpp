#include "export/exportactions.h"

#include "export/exportcontext.h"
#include "export/exportjob.h"
#include "tensor/histogramview.h"
#include "tensor/tensorpage.h"
#include "tensor/tensortreemodel.h"
#include "tensor/tensorvaluesmodel.h"
#include "tensor/tensorvaluesview.h"

#include "ckptscope/export/converter.h"
#include "ckptscope/export/csvwriter.h"
#include "ckptscope/export/npywriter.h"
#include "ckptscope/io/atomicfile.h"
#include "ckptscope/stats/documentstats.h"

#include <QAction>
#include <QApplication>
#include <QBuffer>
#include <QClipboard>
#include <QFileDialog>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QMenu>
#include <QMessageBox>
#include <QPainter>
#include <QSvgGenerator>
#include <QTableView>
#include <QTreeView>

#include <map>
#include <sstream>

using namespace ckptscope;

namespace {

std::string local(const QString& path) {
    return QFile::encodeName(path).toStdString();
}

void writeBytes(const QString& path, const QByteArray& bytes) {
    writeFileAtomically(local(path), [&](std::ostream& out) {
        out.write(bytes.constData(), std::streamsize(bytes.size()));
    });
}

} // namespace

ExportActions::ExportActions(ExportContext* context, QObject* parent)
    : QObject(parent), m_context(context) {
    m_exportValues = new QAction(tr("&Export Values…"), this);
    m_exportValues->setToolTip(tr("Write the tensor's values as .npy or .csv"));
    m_exportHistogram = new QAction(tr("Export &Histogram…"), this);
    m_exportSelection = new QAction(tr("Export &Selection…"), this);
    m_exportStats = new QAction(tr("Export &Statistics…"), this);
    m_exportStats->setToolTip(tr("Statistics of every tensor as CSV"));
    m_convert = new QAction(tr("Con&vert…"), this);
    m_convert->setToolTip(tr("Write the file as safetensors, npz or OXCK"));
    m_copyName = new QAction(tr("Copy &Name"), this);

    connect(m_exportValues, &QAction::triggered, this, [this] {
        const int t = currentTensor();
        if (t < 0)
            return;
        const QString name =
            QString::fromStdString(m_context->document()->tensors()[size_t(t)].name);
        const QString path = askPath(tr("Export Values"), name + QStringLiteral(".npy"),
                                     tr("NumPy array (*.npy);;CSV (*.csv)"));
        if (!path.isEmpty())
            exportValues(t, path);
    });
    connect(m_exportHistogram, &QAction::triggered, this, [this] {
        const QString path = askPath(tr("Export Histogram"), QStringLiteral("histogram.png"),
                                     tr("PNG image (*.png);;SVG drawing (*.svg);;CSV (*.csv)"));
        QString error;
        if (!path.isEmpty() && !exportHistogram(path, &error))
            QMessageBox::warning(m_context->dialogParent(), tr("Export Histogram"), error);
    });
    connect(m_exportSelection, &QAction::triggered, this, [this] {
        const QString path =
            askPath(tr("Export Selection"), QStringLiteral("selection.csv"), tr("CSV (*.csv)"));
        QString error;
        if (!path.isEmpty() && !exportSelection(path, &error))
            QMessageBox::warning(m_context->dialogParent(), tr("Export Selection"), error);
    });
    connect(m_exportStats, &QAction::triggered, this, [this] {
        const QString base = QFileInfo(m_context->currentPath()).completeBaseName();
        const QString path = askPath(tr("Export Statistics"), base + QStringLiteral("-stats.csv"),
                                     tr("CSV (*.csv)"));
        if (!path.isEmpty())
            exportStatistics(path);
    });
    connect(m_convert, &QAction::triggered, this, [this] {
        const auto doc = m_context->document();
        if (!doc || !doc->hasTensors())
            return;
        const bool toSafetensors = suggestedTarget(*doc) == ConvertTarget::Safetensors;
        const QString base = QFileInfo(m_context->currentPath()).completeBaseName();
        const QString path = askPath(
            tr("Convert"),
            base + (toSafetensors ? QStringLiteral(".safetensors") : QStringLiteral(".oxck")),
            toSafetensors ? tr("safetensors (*.safetensors);;NumPy archive (*.npz)")
                          : tr("OXCK checkpoint (*.oxck);;NumPy archive (*.npz)"));
        if (!path.isEmpty())
            convert(path);
    });
    connect(m_copyName, &QAction::triggered, this, [this] {
        const QModelIndex idx = m_context->tensorTree()->currentIndex();
        const int t = currentTensor();
        // A group copies its path prefix as the tree shows it.
        QApplication::clipboard()->setText(
            t >= 0 ? QString::fromStdString(m_context->document()->tensors()[size_t(t)].name)
                   : idx.data().toString());
    });
    connect(m_context->tensorPage(), &TensorPage::statsReady, this,
            [this](int tensor, const StatsResult& r) {
                m_lastStats = r;
                m_lastStatsTensor = tensor;
            });
    updateActions();
}

void ExportActions::install(QMenu* fileMenu, QMenu* tensorMenu) {
    fileMenu->addAction(m_exportStats);
    fileMenu->addAction(m_convert);
    tensorMenu->addAction(m_exportValues);
    tensorMenu->addAction(m_exportHistogram);
    tensorMenu->addAction(m_copyName);
    connect(fileMenu, &QMenu::aboutToShow, this, &ExportActions::updateActions);
    connect(tensorMenu, &QMenu::aboutToShow, this, &ExportActions::updateActions);

    QTreeView* tree = m_context->tensorTree();
    // Shortcuts and tests trigger actions without opening a menu: keep the
    // enabled states current (the context calls updateActions() on a load).
    connect(tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &ExportActions::updateActions);
    tree->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(tree, &QWidget::customContextMenuRequested, this, [this, tree](const QPoint& at) {
        if (!tree->indexAt(at).isValid())
            return;
        updateActions();
        QMenu menu;
        menu.addAction(m_exportValues);
        menu.addAction(m_copyName);
        menu.exec(tree->viewport()->mapToGlobal(at));
    });
    QTableView* table = m_context->valuesView()->table();
    table->addAction(m_exportSelection);
    table->setContextMenuPolicy(Qt::ActionsContextMenu);
    connect(table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ExportActions::updateActions);
}

int ExportActions::currentTensor() const {
    const auto doc = m_context->document();
    if (!doc || !doc->hasTensors())
        return -1;
    const int t =
        m_context->tensorTree()->currentIndex().data(TensorTreeModel::TensorIndexRole).toInt();
    return t >= 0 && size_t(t) < doc->tensors().size() ? t : -1;
}

void ExportActions::updateActions() {
    const auto doc = m_context->document();
    const bool tensors = doc && doc->hasTensors();
    const bool busy = m_job && m_job->isRunning();
    m_exportValues->setEnabled(!busy && currentTensor() >= 0);
    m_copyName->setEnabled(tensors && m_context->tensorTree()->currentIndex().isValid());
    m_exportHistogram->setEnabled(
        !m_context->tensorPage()->histogramView()->histogram().counts.empty());
    m_exportSelection->setEnabled(
        m_context->valuesView()->table()->selectionModel() &&
        m_context->valuesView()->table()->selectionModel()->hasSelection());
    m_exportStats->setEnabled(!busy && tensors);
    m_convert->setEnabled(!busy && tensors);
}

QString ExportActions::askPath(const QString& title, const QString& suggested,
                               const QString& filters) {
    const QString dir = QFileInfo(m_context->currentPath()).absolutePath();
    return QFileDialog::getSaveFileName(m_context->dialogParent(), title,
                                        dir + QLatin1Char('/') + suggested, filters);
}

ExportJob*
ExportActions::startJob(const QString& title, const QString& path,
                        std::function<std::vector<std::string>(const TaskControl&)> work) {
    if (m_job && m_job->isRunning())
        return nullptr; // one at a time; the actions are disabled meanwhile
    auto* job = new ExportJob(m_context->dialogParent(), title, std::move(work));
    m_job = job;
    updateActions();
    const QString name = QFileInfo(path).fileName();
    connect(job, &ExportJob::finished, this, [this, job, name](const QStringList& warnings) {
        m_context->showStatus(
            warnings.isEmpty() ? tr("Wrote %1").arg(name)
                               : tr("Wrote %1 (%2)").arg(name, warnings.join(QStringLiteral("; "))),
            10000);
        job->deleteLater();
        updateActions();
    });
    connect(job, &ExportJob::failed, this, [this, job, title](const QString& message) {
        if (!qEnvironmentVariableIsSet("CKPTSCOPE_NO_DIALOGS"))
            QMessageBox::warning(m_context->dialogParent(), title, message);
        m_context->showStatus(message, 10000);
        job->deleteLater();
        updateActions();
    });
    connect(job, &ExportJob::cancelled, this, [this, job, title] {
        m_context->showStatus(tr("%1 cancelled; nothing was written").arg(title), 10000);
        job->deleteLater();
        updateActions();
    });
    return job;
}

ExportJob* ExportActions::exportValues(int tensor, const QString& path) {
    const auto doc = m_context->document();
    if (!doc || !doc->hasTensors() || tensor < 0 || size_t(tensor) >= doc->tensors().size())
        return nullptr;
    const bool csv = path.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive);
    const std::string out = local(path);
    const size_t index = size_t(tensor);
    return startJob(tr("Export Values"), path, [doc, index, csv, out](const TaskControl& control) {
        if (sameFile(doc->path(), out))
            throw ExportError(out + " is the open file; export never writes over it");
        std::vector<std::string> notes;
        writeFileAtomically(out, [&](std::ostream& stream) {
            if (csv) {
                writeTensorCsv(stream, *doc, index, control);
            } else {
                const NpyLayout layout = npyLayout(*doc, index);
                notes = layout.notes;
                writeNpy(stream, *doc, index, layout, control);
            }
        });
        return notes;
    });
}

ExportJob* ExportActions::exportStatistics(const QString& path) {
    const auto doc = m_context->document();
    if (!doc || !doc->hasTensors())
        return nullptr;
    const std::string out = local(path);
    return startJob(tr("Export Statistics"), path, [doc, out](const TaskControl& control) {
        if (sameFile(doc->path(), out))
            throw ExportError(out + " is the open file; export never writes over it");
        uint64_t total = 0, done = 0;
        for (const TensorEntry& t : doc->tensors())
            total += t.dataLen;
        std::string text = csvLine(statsCsvHeader());
        for (size_t i = 0; i < doc->tensors().size(); ++i) {
            const uint64_t n = doc->tensors()[i].dataLen;
            StatsOptions options;
            options.cancel = control.cancel;
            options.progress = [&](double p) {
                control.report(done + uint64_t(p * double(n)), total);
            };
            const TensorEntry& t = doc->tensors()[i];
            text += csvLine(hasStatistics(t.dtype)
                                ? statsCsvRow(t.name, computeTensorStats(*doc, i, options))
                                : statsCsvRowWithout(t.name, t.dataLen));
            done += n;
        }
        control.throwIfCancelled();
        writeFileAtomically(out, [&](std::ostream& s) { s << text; });
        return std::vector<std::string>{};
    });
}

ExportJob* ExportActions::convert(const QString& path) {
    const auto doc = m_context->document();
    const auto target = convertTargetFor(local(path));
    if (!doc || !target)
        return nullptr;
    const std::string out = local(path);
    const ConvertTarget to = *target;
    return startJob(tr("Convert"), path, [doc, to, out](const TaskControl& control) {
        return convertDocument(*doc, to, out, control);
    });
}

bool ExportActions::exportHistogram(const QString& path, QString* error) {
    HistogramView* view = m_context->tensorPage()->histogramView();
    if (view->histogram().counts.empty()) {
        if (error)
            *error = tr("There is no histogram to export.");
        return false;
    }
    try {
        const QString suffix = QFileInfo(path).suffix().toLower();
        if (suffix == QStringLiteral("csv")) {
            // The stats behind the histogram: the shown tensor's last result.
            StatsResult r = m_lastStats;
            r.histogram = view->histogram();
            std::ostringstream text;
            writeHistogramCsv(text, r);
            writeBytes(path, QByteArray::fromStdString(text.str()));
        } else if (suffix == QStringLiteral("svg")) {
            QBuffer buffer;
            buffer.open(QIODevice::WriteOnly);
            QSvgGenerator svg;
            svg.setOutputDevice(&buffer);
            svg.setSize(view->size());
            svg.setViewBox(view->rect());
            svg.setTitle(tr("Histogram"));
            {
                QPainter painter(&svg);
                view->render(&painter);
            }
            writeBytes(path, buffer.data());
        } else {
            QBuffer buffer;
            buffer.open(QIODevice::WriteOnly);
            view->grab().save(&buffer, "PNG");
            writeBytes(path, buffer.data());
        }
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}

bool ExportActions::exportSelection(const QString& path, QString* error) {
    const auto doc = m_context->document();
    TensorValuesView* values = m_context->valuesView();
    const int tensor = currentTensor();
    QItemSelectionModel* selection = values->table()->selectionModel();
    if (!doc || tensor < 0 || !selection || !selection->hasSelection()) {
        if (error)
            *error = tr("Select values on the Values page first.");
        return false;
    }
    qint64 cells = 0;
    for (const QItemSelectionRange& r : selection->selection())
        cells += qint64(r.width()) * r.height();
    if (cells > TensorValuesView::kMaxCopyCells) {
        if (error)
            *error = tr("The selection holds more than %1 values; use Export Values for the whole "
                        "tensor.")
                         .arg(TensorValuesView::kMaxCopyCells);
        return false;
    }
    try {
        // Rows and columns of the selection in order, gaps left empty; the
        // exact text of each value read from the file.
        std::map<int, std::map<int, std::string>> grid;
        int minCol = INT_MAX, maxCol = -1;
        for (const QModelIndex& idx : selection->selectedIndexes()) {
            const uint64_t at = values->model()->linearIndex(idx.row(), idx.column());
            grid[idx.row()][idx.column()] = valueTexts(*doc, size_t(tensor), at, 1)[0];
            minCol = std::min(minCol, idx.column());
            maxCol = std::max(maxCol, idx.column());
        }
        std::string text;
        for (const auto& [row, cols] : grid) {
            std::vector<std::string> line;
            for (int c = minCol; c <= maxCol; ++c) {
                const auto it = cols.find(c);
                line.push_back(it == cols.end() ? std::string() : it->second);
            }
            text += csvLine(line);
        }
        writeBytes(path, QByteArray::fromStdString(text));
    } catch (const std::exception& e) {
        if (error)
            *error = QString::fromStdString(e.what());
        return false;
    }
    return true;
}
