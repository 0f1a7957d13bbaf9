// The resource report ptxas writes with -v (NVRTC returns it in its log): spill bytes and the
// other figures per kernel, to complete what the cubin holds (cubin_info.hxx).

#include "harness/compile/cubin_info.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <string>

namespace harness::compile {

namespace {

// "<count> <unit>" items of a ptxas line, e.g. "4224 bytes smem" -> (4224, "bytes smem").
struct CountedItem {
    long long count = 0;
    std::string_view unit;
};
std::vector<CountedItem> counted_items(std::string_view text)
{
    std::vector<CountedItem> items;
    while (!text.empty()) {
        const auto comma = text.find(',');
        std::string_view item = trim(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (item.starts_with("Used ") || item.starts_with("used ")) item.remove_prefix(5);
        CountedItem counted;
        auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), counted.count);
        if (error != std::errc{} || end == item.data()) continue;
        counted.unit = trim(item.substr(static_cast<std::size_t>(end - item.data())));
        items.push_back(counted);
    }
    return items;
}

int clamp_to_int(long long value)
{
    return static_cast<int>(std::clamp<long long>(value, 0, std::numeric_limits<int>::max()));
}

/// Sets the figures that the "<count> <unit>" items of a ptxas line state: the "stack frame" line
/// (stack frame, spills) or the "Used" line (registers, barriers, shared memory, cumulative stack).
void set_counted_figures(KernelResources& kernel, std::string_view text)
{
    for (const CountedItem& item : counted_items(text)) {
        const int count = clamp_to_int(item.count);
        if (item.unit == "bytes stack frame")
            kernel.local_bytes = count;
        else if (item.unit == "bytes spill stores")
            kernel.spill_store_bytes = count;
        else if (item.unit == "bytes spill loads")
            kernel.spill_load_bytes = count;
        else if (item.unit == "registers")
            kernel.registers = count;
        else if (item.unit == "barriers" || item.unit == "barrier")
            kernel.barriers = count;
        else if (item.unit == "bytes smem")
            kernel.static_shared_bytes = count;
        else if (item.unit == "bytes cumulative stack size")
            kernel.max_stack_bytes = count;
    }
}

} // namespace

std::vector<KernelResources> parse_ptxas_log(std::string_view log)
{
    // ptxas reports an entry function as:
    //   ptxas info    : Compiling entry function '_Z8tile_sumPKfPf' for 'sm_80'
    //   ptxas info    : Function properties for _Z8tile_sumPKfPf
    //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    //   ptxas info    : Used 14 registers, used 1 barriers, 4224 bytes smem, 368 bytes cmem[0]
    // and device functions with a "Function properties" block of their own, which is skipped.
    std::vector<KernelResources> kernels;
    std::map<std::string, std::size_t, std::less<>> index;
    constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
    std::size_t compiling = none;  // entry whose "Used" line comes next
    std::size_t properties = none; // entry whose "stack frame" line comes next

    while (!log.empty()) {
        const auto newline = log.find('\n');
        const std::string_view line = log.substr(0, newline);
        log = newline == std::string_view::npos ? std::string_view{} : log.substr(newline + 1);
        if (!line.starts_with("ptxas")) continue;

        constexpr std::string_view entry_marker = "Compiling entry function '";
        constexpr std::string_view properties_marker = "Function properties for ";
        if (auto at = line.find(entry_marker); at != std::string_view::npos) {
            const std::string_view rest = line.substr(at + entry_marker.size());
            const std::string name(rest.substr(0, rest.find('\'')));
            KernelResources fresh;
            fresh.name = name;
            auto [it, inserted] = index.try_emplace(name, kernels.size());
            if (inserted)
                kernels.push_back(std::move(fresh));
            else
                kernels[it->second] = std::move(fresh); // a later report replaces an earlier one
            compiling = it->second;
            properties = none;
        } else if (auto at = line.find(properties_marker); at != std::string_view::npos) {
            auto it = index.find(trim(line.substr(at + properties_marker.size())));
            properties = it == index.end() ? none : it->second;
        } else if (line.find("bytes stack frame") != std::string_view::npos) {
            const auto numbers = line.find_first_of("0123456789");
            if (properties == none || numbers == std::string_view::npos) continue;
            set_counted_figures(kernels[properties], line.substr(numbers));
            properties = none;
        } else if (auto at = line.find("Used "); at != std::string_view::npos && compiling != none) {
            set_counted_figures(kernels[compiling], line.substr(at));
            compiling = none;
        }
    }
    return kernels;
}

void merge_ptxas_log(CubinInfo& info, std::span<const KernelResources> from_log)
{
    for (KernelResources& kernel : info.kernels) {
        auto logged = std::find_if(from_log.begin(), from_log.end(),
                                   [&](const KernelResources& k) { return k.name == kernel.name; });
        if (logged == from_log.end()) continue;
        if (!kernel.spill_store_bytes) kernel.spill_store_bytes = logged->spill_store_bytes;
        if (!kernel.spill_load_bytes) kernel.spill_load_bytes = logged->spill_load_bytes;
    }
}

} // namespace harness::compile
