#pragma once

#include <QString>

class QGraphicsScene;

namespace ckptscope {
struct GradientCheckpoint;
}

// Writes the drawing of a scene to SVG or PNG (by the file's suffix),
// through a temporary file that is renamed on success. Returns an error
// message, empty on success.
QString exportScene(QGraphicsScene* scene, const QString& path);

// The file to write for a name typed in a save dialog with a filter chosen
// ("PNG (*.png)"): a name without a known image suffix gets the filter's.
QString exportPath(const QString& path, const QString& selectedFilter);

// Lays out and draws a whole checkpoint graph the way the GUI does, without
// a window: for `ckptscope-cli render` and the tests. Needs a QApplication
// (the offscreen platform is enough).
QString renderCheckpointGraph(const ckptscope::GradientCheckpoint& checkpoint, const QString& path,
                              bool leftToRight = false);
