#include "formats/pytorch/pickleimports.h"

#include "ckptscope/common/jsonstreamwriter.h"
#include "ckptscope/formats/pytorch/picklescan.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_set>

namespace ckptscope::pytorch {

namespace {

// Globals that only make data (README of the corpus; PyTorch's allow-list,
// plus NumPy's array rebuilders and the container classes).
// Looked up without building anything: globalTier runs in every open of a
// pickle, often first thing in the process.
constexpr std::string_view kDataGlobals[] = {
    "_codecs.encode",
    "collections.OrderedDict",
    "collections.defaultdict",
    "collections.Counter",
    "copyreg._reconstructor",
    "copy_reg._reconstructor",
    "torch.Size",
    "torch.device",
    "numpy.ndarray",
    "numpy.dtype",
    "numpy.core.multiarray._reconstruct",
    "numpy.core.multiarray.scalar",
    "numpy._core.multiarray._reconstruct",
    "numpy._core.multiarray.scalar",
};

const char* const kDataBuiltins[] = {"set",     "frozenset", "bytearray", "bytes",
                                     "complex", "slice",     "object"};

// torch's dtype, layout, quantization-scheme and memory-format constants:
// names of data, as torch.<name>.
const char* const kTorchDtypes[] = {"float32",
                                    "float",
                                    "float64",
                                    "double",
                                    "float16",
                                    "half",
                                    "bfloat16",
                                    "int8",
                                    "int16",
                                    "short",
                                    "int32",
                                    "int",
                                    "int64",
                                    "long",
                                    "uint8",
                                    "bool",
                                    "complex64",
                                    "cfloat",
                                    "complex128",
                                    "cdouble",
                                    "float8_e4m3fn",
                                    "float8_e5m2",
                                    "uint16",
                                    "uint32",
                                    "uint64",
                                    "qint8",
                                    "quint8",
                                    "qint32",
                                    "quint4x2",
                                    "quint2x4",
                                    "per_tensor_affine",
                                    "per_channel_affine",
                                    "per_channel_affine_float_qparams",
                                    "per_tensor_symmetric",
                                    "per_channel_symmetric",
                                    "sparse_coo",
                                    "sparse_csr",
                                    "sparse_csc",
                                    "sparse_bsr",
                                    "sparse_bsc",
                                    "channels_last",
                                    "contiguous_format",
                                    "preserve_format",
                                    "strided"};

// Modules (and their submodules) whose globals run code or reach the system.
const char* const kUnsafeModules[] = {"os",
                                      "posix",
                                      "nt",
                                      "subprocess",
                                      "sys",
                                      "socket",
                                      "shutil",
                                      "runpy",
                                      "pickle",
                                      "_pickle",
                                      "cPickle",
                                      "dill",
                                      "pdb",
                                      "ctypes",
                                      "importlib",
                                      "webbrowser",
                                      "requests",
                                      "urllib",
                                      "http.client",
                                      "pty",
                                      "code",
                                      "commands",
                                      "multiprocessing",
                                      "asyncio",
                                      "marshal",
                                      "signal",
                                      "ftplib",
                                      "smtplib",
                                      "telnetlib",
                                      "_posixsubprocess",
                                      "platform"};

const char* const kUnsafeNames[] = {"functools.partial",
                                    "operator.attrgetter",
                                    "operator.methodcaller",
                                    "pkgutil.resolve_name",
                                    "torch.serialization.load",
                                    "torch.load",
                                    "torch.storage._load_from_bytes",
                                    "numpy.testing._private.utils.runstring"};

bool isGetattr(const std::string& name) {
    return name == "__builtin__.getattr" || name == "builtins.getattr";
}

// A call's arguments (in warnings, the Overview, `info --json`'s and
// `scan --json`'s calls) are written out within 10 000 nodes, a long text's
// bytes counted 64 to a node, then by reference: a 1 MB string passed 250 000
// times would make a line of 250 GB.
constexpr uint64_t kWarningBudget = 10000;

// Arguments as one line of JSON, as `objects` writes them.
std::string argumentsJson(const ObjectTree& tree, std::span<const uint32_t> args,
                          const std::vector<std::string>& names) {
    std::string out;
    JsonStreamWriter json(out);
    json.beginArray(JsonStreamWriter::Layout::Inline);
    for (uint32_t a : args)
        writeObjectJson(json, tree, names, kWarningBudget, a);
    json.endArray();
    json.flush();
    return out;
}

std::string nodeJson(const ObjectTree& tree, uint32_t node, const std::vector<std::string>& names) {
    std::string out;
    JsonStreamWriter json(out);
    json.beginArray(JsonStreamWriter::Layout::Inline);
    writeObjectJson(json, tree, names, kWarningBudget, node);
    json.endArray();
    json.flush();
    return out.substr(1, out.size() - 2);
}

} // namespace

} // namespace ckptscope::pytorch

namespace ckptscope {

const char* importRiskName(ImportRisk risk) {
    switch (risk) {
    case ImportRisk::Safe:
        return "safe";
    case ImportRisk::Unsafe:
        return "unsafe";
    case ImportRisk::Unknown:
        break;
    }
    return "unknown";
}

UnsafeCalls unsafeCalls(const ObjectTree& tree, const std::vector<PickleImport>& imports,
                        size_t shown) {
    // The outermost calls only: getattr(__import__('os'), 'system')('…') is
    // one call, whose callee and arguments hold the others.
    std::vector<uint32_t> calls;
    UnsafeCalls out;
    std::unordered_set<std::string> said;
    for (const PickleImport& imp : imports)
        if (imp.risk == ImportRisk::Unsafe) {
            if (imp.calls.empty() && said.insert(imp.name).second) {
                if (out.shown.size() < shown)
                    out.shown.push_back(imp.name);
                else
                    ++out.more;
            }
            calls.insert(calls.end(), imp.calls.begin(), imp.calls.end());
        }
    std::set<uint32_t> inner;
    for (uint32_t c : calls) {
        const ObjectNode& n = tree.at(c);
        inner.insert(n.items.begin(), n.items.end());
        inner.insert(n.callee);
    }
    // Each call once, in file order. The shown ones are told apart by their
    // text (two calls of os.system('x') are one); the rest by what they call
    // and with which values (the same node: a memoized argument), without
    // spelling them.
    std::unordered_set<std::string> others;
    for (uint32_t c : calls) {
        if (inner.count(c))
            continue;
        if (out.shown.size() < shown) {
            std::string text = objectKeyText(tree, c);
            if (said.insert(text).second)
                out.shown.push_back(std::move(text));
            continue;
        }
        const ObjectNode& n = tree.at(c);
        std::string key = n.text + '\0' + std::to_string(n.callee);
        for (uint32_t i : n.items)
            key += ',' + std::to_string(i);
        if (others.insert(std::move(key)).second)
            ++out.more;
    }
    return out;
}

std::optional<std::string> CallArguments::json(uint32_t call) {
    if (m_left == 0)
        return std::nullopt;
    std::string text = pytorch::argumentsJson(m_tree, m_tree.at(call).items, m_names);
    m_left -= std::min<uint64_t>(m_left, text.size());
    return text;
}

} // namespace ckptscope

namespace ckptscope::pytorch {

ImportRisk globalTier(const std::string& name) {
    if (std::find(std::begin(kDataGlobals), std::end(kDataGlobals), name) !=
            std::end(kDataGlobals) ||
        name.starts_with("torch._utils._rebuild_"))
        return ImportRisk::Safe;
    const size_t dot = name.rfind('.');
    const std::string_view module =
        dot == std::string::npos ? std::string_view(name) : std::string_view(name).substr(0, dot);
    const std::string_view base =
        dot == std::string::npos ? std::string_view(name) : std::string_view(name).substr(dot + 1);
    if (module == "torch") {
        if (base.size() > 7 && base.ends_with("Storage"))
            return ImportRisk::Safe;
        for (const char* d : kTorchDtypes)
            if (base == d)
                return ImportRisk::Safe;
    }
    for (const char* n : kUnsafeNames)
        if (name == n)
            return ImportRisk::Unsafe;
    if (module == "builtins" || module == "__builtin__") {
        for (const char* d : kDataBuiltins)
            if (base == d)
                return ImportRisk::Safe;
        return ImportRisk::Unsafe; // eval, exec, __import__, open, getattr…
    }
    for (const std::string_view m : kUnsafeModules)
        if (module == m ||
            (module.starts_with(m) && module.size() > m.size() && module[m.size()] == '.'))
            return ImportRisk::Unsafe;
    return ImportRisk::Unknown;
}

std::vector<PickleImport> classifyImports(const ObjectTree& tree, const TorchUnpickler& u) {
    std::set<uint32_t> called;
    for (uint32_t c : u.calledResults)
        called.insert(tree.at(c).callee);
    std::vector<PickleImport> out;
    for (const auto& [name, use] : u.globals) {
        PickleImport imp;
        imp.name = name;
        imp.count = use.count;
        if (isGetattr(name)) {
            // An enum member unless its result is called or it reaches into a
            // call's result (getattr(__import__('os'), 'system')).
            imp.risk = ImportRisk::Safe;
            for (uint32_t c : use.calls) {
                const ObjectNode& n = tree.at(c);
                const bool ofClass =
                    !n.items.empty() && tree.at(n.items[0]).kind == ObjectKind::Global;
                if (!ofClass || called.count(c)) {
                    imp.risk = ImportRisk::Unsafe;
                    imp.calls.push_back(c);
                }
            }
        } else {
            imp.risk = globalTier(name);
            if (imp.risk == ImportRisk::Unsafe)
                imp.calls = use.calls;
        }
        out.push_back(std::move(imp));
    }
    // A call of a call's result belongs with the global that made the callee.
    for (uint32_t c : u.calledResults) {
        uint32_t callee = tree.at(c).callee;
        while (callee != kNoNode && tree.at(callee).kind == ObjectKind::Call)
            callee = tree.at(callee).callee;
        if (callee == kNoNode || tree.at(callee).kind != ObjectKind::Object)
            continue;
        for (PickleImport& imp : out)
            if (imp.name == tree.at(callee).text) {
                imp.risk = ImportRisk::Unsafe;
                imp.calls.push_back(c);
            }
    }
    return out;
}

std::vector<std::string> importWarnings(const ObjectTree& tree,
                                        const std::vector<PickleImport>& imports,
                                        const std::vector<std::string>& names) {
    // The first calls' arguments and how many more: a pickle of 100 000
    // calls would make warnings of megabytes (`scan` lists every call).
    constexpr size_t kCallsTold = 20;
    CallArguments arguments(tree, names);
    std::vector<std::string> out;
    std::vector<uint32_t> resultCalls;
    std::unordered_set<uint32_t> resultSeen;
    for (const PickleImport& imp : imports) {
        if (imp.risk == ImportRisk::Unknown) {
            out.push_back("unknown import " + imp.name);
            continue;
        }
        if (imp.risk != ImportRisk::Unsafe)
            continue;
        std::string w = "unsafe import " + imp.name;
        size_t told = 0, more = 0;
        for (uint32_t c : imp.calls) {
            const ObjectNode& n = tree.at(c);
            if (n.kind == ObjectKind::Call) {
                if (resultSeen.insert(c).second)
                    resultCalls.push_back(c);
                continue;
            }
            std::optional<std::string> args;
            if (told == kCallsTold || !(args = arguments.json(c))) {
                ++more;
                continue;
            }
            w += (told == 0 ? " called with " : " and with ") + *args;
            ++told;
        }
        if (more > 0 && told == 0)
            w += " called " + std::to_string(more) + " time" + (more == 1 ? " " : "s ") +
                 CallArguments::kNotWritten;
        else if (more > 0)
            w += " and " + std::to_string(more) + " more time" + (more == 1 ? "" : "s") +
                 " (ckptscope-cli scan lists every call)";
        out.push_back(std::move(w));
    }
    for (size_t i = 0; i < resultCalls.size() && i < kCallsTold; ++i) {
        const ObjectNode& n = tree.at(resultCalls[i]);
        const std::optional<std::string> args = arguments.json(resultCalls[i]);
        out.push_back("unsafe call of " + nodeJson(tree, n.callee, names) + "'s result " +
                      (args ? "with " + *args : std::string(CallArguments::kNotWritten)));
    }
    if (resultCalls.size() > kCallsTold)
        out.push_back(std::to_string(resultCalls.size() - kCallsTold) +
                      " more unsafe calls of a call's result (ckptscope-cli scan lists every "
                      "call)");
    return out;
}

} // namespace ckptscope::pytorch
