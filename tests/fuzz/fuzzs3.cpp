// The fuzz check of S3's XML answers: what a server (or anything posing as
// one) sends in a listing or an error is parsed or refused naming the
// prefix, never trusted further.
#include "fuzzchecks.h"

#include "ckptscope/io/filesource.h"
#include "io/s3xml.h"

#include <string>

namespace fuzzchecks {

void checkS3Xml(std::string_view bytes) {
    const std::string name = "s3://fuzz/prefix/";
    try {
        const ckptscope::s3::ListPage page = ckptscope::s3::parseListPage(bytes, name);
        require(!page.truncated || !page.nextToken.empty(), "a cut listing without its token");
    } catch (const ckptscope::IoError& e) {
        require(std::string(e.what()).rfind(name + ": ", 0) == 0,
                std::string("a refused listing not named: ") + e.what());
    }
    if (const auto error = ckptscope::s3::parseError(bytes))
        require(!error->code.empty(), "an S3 error without its code");
}

} // namespace fuzzchecks
