#include "core/compute/memoryfit.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string_view>


namespace attnscope {

namespace {

// A whole number of bytes from the start of `text` (the rest ignored), or nothing.
std::optional<double> leadingNumber(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    return double(value);
}

// The first line of a small file under /proc or /sys; empty when it cannot be read.
std::string firstLine(const std::string& path)
{
    std::ifstream in(path);
    std::string line;
    if (in) std::getline(in, line);
    return line.size() > 256 ? std::string() : line;
}

std::optional<double> memAvailable()
{
    std::ifstream in("/proc/meminfo");
    std::string line;
    for (int lines = 0; lines < 200 && std::getline(in, line); ++lines)
        if (line.starts_with("MemAvailable:"))
            if (const auto kb = leadingNumber(std::string_view(line).substr(13))) return *kb * 1024.0;
    return std::nullopt;
}

// The memory cgroup this process is in: its limit less what it uses, or nothing when it has no limit.
std::optional<double> cgroupRoom()
{
    // cgroup v2: one line "0::/path" in /proc/self/cgroup.
    std::ifstream self("/proc/self/cgroup");
    std::string line, v2path;
    for (int lines = 0; lines < 64 && std::getline(self, line); ++lines)
        if (line.starts_with("0::")) v2path = line.substr(3);
    if (v2path.find("..") != std::string::npos) v2path.clear();
    for (const std::string& dir : {"/sys/fs/cgroup" + v2path, std::string("/sys/fs/cgroup")}) {
        const std::string max = firstLine(dir + "/memory.max");
        if (max.empty()) continue;
        if (max == "max") return std::nullopt;
        const auto limit = leadingNumber(max), used = leadingNumber(firstLine(dir + "/memory.current"));
        if (limit && used) return std::max(0.0, *limit - *used);
    }
    // cgroup v1.
    const auto limit = leadingNumber(firstLine("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
    const auto used = leadingNumber(firstLine("/sys/fs/cgroup/memory/memory.usage_in_bytes"));
    if (limit && used && *limit < 1e18) return std::max(0.0, *limit - *used);  // "no limit" is a huge number
    return std::nullopt;
}

} // namespace

std::optional<MemoryAvailable> memoryAvailable()
{
    if (const char* forced = std::getenv("ATTNSCOPE_MEMORY_AVAILABLE"))
        if (const auto bytes = leadingNumber(forced)) return MemoryAvailable{*bytes, "ATTNSCOPE_MEMORY_AVAILABLE"};
    std::optional<MemoryAvailable> room;
    if (const auto bytes = memAvailable()) room = MemoryAvailable{*bytes, "MemAvailable in /proc/meminfo"};
    if (const auto bytes = cgroupRoom(); bytes && (!room || *bytes < room->bytes))
        room = MemoryAvailable{*bytes, "the memory limit of this process's cgroup, less what it uses"};
    return room;
}

std::string formatBytes(double bytes)
{
    char text[32];
    if (bytes >= 1e9) std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
    else std::snprintf(text, sizeof text, "%.0f MB", std::max(1.0, std::round(bytes / 1e6)));
    return text;
}

Status checkMemoryFits(const MemoryNeed& need, const std::string& what)
{
    const std::optional<MemoryAvailable> room = memoryAvailable();
    if (!room || need.total() <= room->bytes) return {};
    return Status::failure(what + " needs about " + formatBytes(need.total()) + " of memory (" + formatBytes(need.weightBytes) +
                           " of weights and " + formatBytes(need.passBytes) + " for a pass of up to " +
                           std::to_string(kMemoryCheckTokens) + " tokens), but this machine can give it " +
                           formatBytes(room->bytes) + " (" + room->source + "); close other programs or choose a smaller model.");
}

} // namespace attnscope
