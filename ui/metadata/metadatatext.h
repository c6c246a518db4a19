#pragma once

#include "ckptscope/document/document.h"

#include <QString>

// How a metadata value reads in the GUI, by its kind: a Unix timestamp as
// "2024-11-29 09:00:03 +01:00 (1732867203)" — local time with its UTC
// offset, then the stored number — everything else as stored. One format
// for the Overview and the Metadata tab alike.
QString metadataValueText(const ckptscope::MetadataRow& row);
QString timestampText(qint64 unixSeconds);
