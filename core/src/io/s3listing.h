#pragma once

#include "io/s3location.h"
#include "io/s3xml.h"

namespace ckptscope::s3 {

// What lies directly under the folder `location.key` names ("" the bucket's
// root, else a prefix ending in '/'): its objects and sub-folders, every
// page of ListObjectsV2 followed (continuation tokens), keys as S3 gives
// them (full keys; sub-folders ending in '/'). `name` is the s3:// URL
// messages say. A bucket in another region is asked again there, once.
// Throws IoError naming `name`, the S3 error code and the credentials'
// source.
ListPage listFolder(const Location& location, const HttpOptions& base, const std::string& name);

} // namespace ckptscope::s3
