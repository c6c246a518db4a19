#pragma once

// Pickles written opcode by opcode, and torch.save archives around them, for
// the tests of the PyTorch reader: what Python's pickler and torch.save emit,
// by hand, so every opcode of protocols 0-5 and every layout can be fed
// without Python or PyTorch.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace picklewriter {

class Pickle {
public:
    std::string bytes;

    Pickle& op(char c) {
        bytes += c;
        return *this;
    }
    Pickle& op(uint8_t c) { return op(char(c)); }
    Pickle& raw(const std::string& s) {
        bytes += s;
        return *this;
    }
    Pickle& le(uint64_t v, int n) {
        for (int i = 0; i < n; ++i)
            bytes += char(uint8_t(v >> (8 * i)));
        return *this;
    }
    Pickle& proto(int v) { return op(uint8_t(0x80)).le(uint64_t(v), 1); }
    Pickle& frame(uint64_t n) { return op(uint8_t(0x95)).le(n, 8); }
    Pickle& stop() { return op('.'); }
    Pickle& mark() { return op('('); }
    Pickle& none() { return op('N'); }
    Pickle& boolean(bool b) { return op(uint8_t(b ? 0x88 : 0x89)); }
    Pickle& binint(int32_t v) { return op('J').le(uint32_t(v), 4); }
    Pickle& binint1(uint8_t v) { return op('K').le(v, 1); }
    Pickle& binint2(uint16_t v) { return op('M').le(v, 2); }
    // LONG1 of the two's-complement bytes given (little-endian).
    Pickle& long1(const std::string& twos) {
        return op(uint8_t(0x8a)).le(twos.size(), 1).raw(twos);
    }
    Pickle& long4(const std::string& twos) {
        return op(uint8_t(0x8b)).le(twos.size(), 4).raw(twos);
    }
    Pickle& binfloat(double v) {
        uint64_t bits;
        static_assert(sizeof bits == sizeof v);
        __builtin_memcpy(&bits, &v, 8);
        op('G');
        for (int i = 7; i >= 0; --i)
            bytes += char(uint8_t(bits >> (8 * i)));
        return *this;
    }
    Pickle& unicode(const std::string& s) { return op('X').le(s.size(), 4).raw(s); }
    Pickle& shortUnicode(const std::string& s) { return op(uint8_t(0x8c)).le(s.size(), 1).raw(s); }
    Pickle& unicode8(const std::string& s) { return op(uint8_t(0x8d)).le(s.size(), 8).raw(s); }
    Pickle& binbytes(const std::string& s) { return op('B').le(s.size(), 4).raw(s); }
    Pickle& shortBinbytes(const std::string& s) { return op('C').le(s.size(), 1).raw(s); }
    Pickle& binbytes8(const std::string& s) { return op(uint8_t(0x8e)).le(s.size(), 8).raw(s); }
    Pickle& bytearray8(const std::string& s) { return op(uint8_t(0x96)).le(s.size(), 8).raw(s); }
    Pickle& shortBinstring(const std::string& s) { return op('U').le(s.size(), 1).raw(s); }
    Pickle& binstring(const std::string& s) { return op('T').le(s.size(), 4).raw(s); }
    Pickle& global(const std::string& module, const std::string& name) {
        return op('c').raw(module + "\n" + name + "\n");
    }
    Pickle& stackGlobal(const std::string& module, const std::string& name) {
        return shortUnicode(module).shortUnicode(name).op(uint8_t(0x93));
    }
    Pickle& binput(uint8_t i) { return op('q').le(i, 1); }
    Pickle& longBinput(uint32_t i) { return op('r').le(i, 4); }
    Pickle& binget(uint8_t i) { return op('h').le(i, 1); }
    Pickle& longBinget(uint32_t i) { return op('j').le(i, 4); }
    Pickle& memoize() { return op(uint8_t(0x94)); }
    Pickle& emptyDict() { return op('}'); }
    Pickle& emptyList() { return op(']'); }
    Pickle& emptyTuple() { return op(')'); }
    Pickle& setitems() { return op('u'); }
    Pickle& appends() { return op('e'); }
    Pickle& tuple() { return op('t'); }
    Pickle& reduce() { return op('R'); }
    Pickle& build() { return op('b'); }

    // collections.OrderedDict() — the dict torch.save's state dicts are.
    Pickle& orderedDict() { return global("collections", "OrderedDict").emptyTuple().reduce(); }
    // A tensor as torch.save pickles it: _rebuild_tensor_v2(storage,
    // offset, size, stride, requires_grad, OrderedDict()), the storage a
    // persistent id ('storage', torch.<type>, key, 'cpu', numel).
    Pickle& tensor(const std::string& key, const std::string& type, uint64_t numel, uint64_t offset,
                   const std::vector<uint64_t>& size, const std::vector<uint64_t>& stride,
                   bool requiresGrad = false) {
        global("torch._utils", "_rebuild_tensor_v2").mark();
        mark().unicode("storage").global("torch", type).unicode(key).unicode("cpu");
        binint(int32_t(numel)).tuple().op('Q');
        binint(int32_t(offset));
        mark();
        for (uint64_t s : size)
            binint(int32_t(s));
        tuple();
        mark();
        for (uint64_t s : stride)
            binint(int32_t(s));
        tuple();
        boolean(requiresGrad).orderedDict().tuple().reduce();
        return *this;
    }
};

// A stored zip as torch.save writes it: ARCHIVE/data.pkl, one
// ARCHIVE/data/KEY record per storage (data 64-byte aligned through an
// extra field, as torch pads), ARCHIVE/version, and ARCHIVE/byteorder when
// given.
inline std::string torchZip(const std::string& archive, const std::string& pickle,
                            const std::vector<std::pair<std::string, std::string>>& storages,
                            const std::string& byteorder = {}) {
    struct Entry {
        std::string name;
        uint64_t offset;
        uint32_t size;
    };
    std::vector<std::pair<std::string, std::string>> records{{archive + "/data.pkl", pickle}};
    for (const auto& [key, data] : storages)
        records.emplace_back(archive + "/data/" + key, data);
    records.emplace_back(archive + "/version", "3\n");
    if (!byteorder.empty())
        records.emplace_back(archive + "/byteorder", byteorder);
    std::string out;
    const auto le = [&](std::string& s, uint64_t v, int n) {
        for (int i = 0; i < n; ++i)
            s += char(uint8_t(v >> (8 * i)));
    };
    std::vector<Entry> entries;
    for (const auto& [name, data] : records) {
        const uint64_t at = out.size();
        // The extra field pads the data to a multiple of 64.
        const uint64_t before = at + 30 + name.size() + 4;
        const uint64_t pad = (64 - before % 64) % 64;
        le(out, 0x04034b50, 4);
        le(out, 20, 2);
        le(out, 0, 2); // flags
        le(out, 0, 2); // stored
        le(out, 0, 4); // time, date
        le(out, 0, 4); // CRC: not checked by the reader
        le(out, data.size(), 4);
        le(out, data.size(), 4);
        le(out, name.size(), 2);
        le(out, 4 + pad, 2);
        out += name;
        le(out, 0x4246, 2); // "FB", torch's padding field
        le(out, pad, 2);
        out.append(pad, 'Z');
        out += data;
        entries.push_back({name, at, uint32_t(data.size())});
    }
    const uint64_t cd = out.size();
    for (const Entry& e : entries) {
        le(out, 0x02014b50, 4);
        le(out, 20, 2);
        le(out, 20, 2);
        le(out, 0, 2);
        le(out, 0, 2);
        le(out, 0, 4);
        le(out, 0, 4);
        le(out, e.size, 4);
        le(out, e.size, 4);
        le(out, e.name.size(), 2);
        le(out, 0, 2);
        le(out, 0, 2);
        le(out, 0, 2);
        le(out, 0, 2);
        le(out, 0, 4);
        le(out, e.offset, 4);
        out += e.name;
    }
    const uint64_t cdSize = out.size() - cd;
    le(out, 0x06054b50, 4);
    le(out, 0, 4);
    le(out, entries.size(), 2);
    le(out, entries.size(), 2);
    le(out, cdSize, 4);
    le(out, cd, 4);
    le(out, 0, 2);
    return out;
}

// A torch.save archive of {"w": a meta tensor of torch.DTYPE, sizes [2, 3]}:
// what a model saved while on the meta device holds (no storage, no values).
inline std::string metaTensorZip(const std::string& dtype = "bfloat16") {
    Pickle p;
    p.proto(2).emptyDict().mark();
    p.unicode("w").global("torch._utils", "_rebuild_meta_tensor_no_storage").mark();
    p.global("torch", dtype).mark().binint(2).binint(3).tuple();
    p.mark().binint(3).binint(1).tuple().boolean(false).tuple().reduce();
    p.setitems().stop();
    return torchZip("archive", p.bytes, {});
}

// Little-endian bytes of values.
template <typename T> std::string leBytes(const std::vector<T>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

} // namespace picklewriter
