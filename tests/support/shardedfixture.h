#pragma once

// A small sharded safetensors model written by the tests: two shards of the
// tests' own safetensors writer (safetensorsbuilder.h), the index spelled out
// here, and the same tensors as one file, so every reading can be compared
// with values computed here.
#include "safetensorsbuilder.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace testsupport {

struct ShardedFixture {
    // Values as written; BF16 ones exactly representable.
    std::vector<float> aWeight{1.5f, -2.25f, 3.0f, 0.0f, 7.75f, -0.5f};
    std::vector<float> aBias{0.125f, 4.0f, -8.0f};
    std::vector<float> bWeight{1.0f, -2.0f, 0.5f, 3.0f}; // stored as BF16
    std::vector<int32_t> c{7, -9};
    std::vector<std::pair<std::string, std::string>> meta1{{"format", "pt"}};
    std::vector<std::pair<std::string, std::string>> meta2{{"format", "pt"}};

    static std::string shardName(int n) {
        return "model-0000" + std::to_string(n) + "-of-00002.safetensors";
    }

    static std::vector<uint16_t> bf16(const std::vector<float>& v) {
        std::vector<uint16_t> out;
        for (float f : v) {
            uint32_t bits = 0;
            std::memcpy(&bits, &f, 4);
            out.push_back(uint16_t(bits >> 16));
        }
        return out;
    }

    std::vector<StTensor> shard1() const {
        return {{"a.weight", "F32", {2, 3}, leBytes(aWeight)},
                {"a.bias", "F32", {3}, leBytes(aBias)}};
    }
    std::vector<StTensor> shard2() const {
        return {{"b.weight", "BF16", {4}, leBytes(bf16(bWeight))}, {"c", "I32", {2}, leBytes(c)}};
    }
    // Every tensor's bytes: what total_size must say.
    uint64_t totalBytes() const {
        uint64_t sum = 0;
        for (const auto& shard : {shard1(), shard2()})
            for (const StTensor& t : shard)
                sum += t.bytes.size();
        return sum;
    }
    nlohmann::ordered_json index() const {
        nlohmann::ordered_json map = nlohmann::ordered_json::object();
        for (const StTensor& t : shard1())
            map[t.name] = shardName(1);
        for (const StTensor& t : shard2())
            map[t.name] = shardName(2);
        return {{"metadata", {{"total_size", totalBytes()}}}, {"weight_map", map}};
    }

    static void write(const std::string& path, const std::string& bytes) {
        std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    }
    // Writes both shards and (unless withIndex is false) the index into dir;
    // returns the index's path.
    std::string writeTo(const std::string& dir, bool withIndex = true) const {
        write(dir + "/" + shardName(1), stFile(shard1(), meta1));
        write(dir + "/" + shardName(2), stFile(shard2(), meta2));
        if (withIndex)
            write(dir + "/model.safetensors.index.json", index().dump(2));
        return dir + "/model.safetensors.index.json";
    }
    // The same model as one file.
    std::string writeSingle(const std::string& path) const {
        std::vector<StTensor> all = shard1();
        for (StTensor& t : shard2())
            all.push_back(t);
        write(path, stFile(all, meta1));
        return path;
    }
};

} // namespace testsupport
