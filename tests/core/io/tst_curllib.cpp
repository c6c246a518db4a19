// libcurl is loaded when the first URL is read, never at start-up
// (io/curllib.h): opening and reading a local file leaves it unloaded, and
// curlLib() then loads it with every function httpclient.cpp calls; one
// missing, too old or lacking a function is refused with a clear error.
#include "testsupport.h"

#include "ckptscope/document/document.h"
#include "ckptscope/formats/gguf/syntheticgguf.h"
#include "ckptscope/io/filesource.h"
#include "ckptscope/stats/documentstats.h"

#include "io/curllib.h"

#include <QTemporaryDir>
#include <QTest>

#include <dlfcn.h>

#include <string>

using namespace ckptscope;
using testsupport::str;

namespace {

// Whether the process has libcurl mapped, whoever loaded it (RTLD_NOLOAD
// loads nothing: it finds a library already there).
bool libcurlMapped() {
    for (const char* soname : {"libcurl.so.4", "libcurl-gnutls.so.4"})
        if (void* lib = ::dlopen(soname, RTLD_NOW | RTLD_NOLOAD)) {
            ::dlclose(lib); // drops only the reference just taken
            return true;
        }
    return false;
}

} // namespace

class TestCurlLib : public QObject {
    Q_OBJECT
private Q_SLOTS:
    // Declared first: QtTest runs them in order, and nothing has read a URL.
    void notLoadedForALocalFile() {
        QVERIFY2(!libcurlMapped(), "libcurl mapped at start-up: linked again?");
        QTemporaryDir dir;
        gguf::SyntheticGgufSpec spec;
        spec.totalBytes = 1 << 20;
        const std::string path = str(dir.filePath(QStringLiteral("model.gguf")));
        gguf::writeSyntheticGguf(path, spec);
        const auto doc = Document::open(path);
        StatsOptions options;
        options.bins = 8;
        QCOMPARE(computeTensorStats(*doc, 0, options).stats.count, doc->tensors()[0].dataLen);
        QVERIFY(!http::curlLoaded());
        QVERIFY(!libcurlMapped());
    }

    void loadedOnFirstUse() {
        const http::CurlLib& lib = http::curlLib();
        QVERIFY(http::curlLoaded());
        QVERIFY(libcurlMapped());
        QVERIFY(lib.global_init && lib.easy_init && lib.easy_setopt && lib.easy_perform &&
                lib.easy_reset && lib.easy_cleanup && lib.easy_strerror && lib.slist_append &&
                lib.slist_free_all && lib.url && lib.url_set && lib.url_get && lib.url_cleanup &&
                lib.free);
        // The functions are libcurl's: a URL parsed by its parser.
        CURLU* u = lib.url();
        QVERIFY(u);
        char* host = nullptr;
        QCOMPARE(lib.url_set(u, CURLUPART_URL, "http://Example.org:8080/a/b.gguf", 0), CURLUE_OK);
        QCOMPARE(lib.url_get(u, CURLUPART_HOST, &host, 0), CURLUE_OK);
        QCOMPARE(std::string(host), std::string("Example.org"));
        lib.free(host);
        lib.url_cleanup(u);
        QCOMPARE(std::string(lib.easy_strerror(CURLE_OK)), std::string("No error"));
        QCOMPARE(&http::curlLib(), &lib); // loaded once
    }

    // A libcurl that cannot be used is refused with what to do, and closed
    // again: missing (each name tried in turn), older than 7.85 (it would
    // ignore CURLOPT_PROTOCOLS_STR), or lacking a function.
    void unusableLibrariesRefused() {
        const auto refusal = [](std::initializer_list<const char*> sonames) {
            try {
                http::loadCurl(sonames);
            } catch (const IoError& e) {
                return std::string(e.what());
            }
            return std::string("loaded");
        };
        const std::string missing = refusal({"libckptscope-no-such-curl.so.4"});
        QVERIFY2(missing.find("libcurl could not be loaded (libckptscope-no-such-curl.so.4") !=
                         std::string::npos &&
                     missing.find("install the libcurl4 package") != std::string::npos,
                 missing.c_str());
        // The next name is tried: the error is the old library's.
        const std::string old = refusal({"libckptscope-no-such-curl.so.4", FAKECURL_OLD});
        QVERIFY2(old.find("libcurl 7.72.0 is older than 7.85.0") != std::string::npos, old.c_str());
        const std::string bare = refusal({FAKECURL_BARE});
        QVERIFY2(bare.find("lacks curl_global_init, curl_easy_init, curl_easy_setopt") !=
                     std::string::npos,
                 bare.c_str());
        for (const char* path : {FAKECURL_OLD, FAKECURL_BARE})
            QVERIFY2(!::dlopen(path, RTLD_NOW | RTLD_NOLOAD), path); // closed again
    }
};

QTEST_GUILESS_MAIN(TestCurlLib)
#include "tst_curllib.moc"
