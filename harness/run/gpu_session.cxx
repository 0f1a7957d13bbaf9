#include "harness/run/gpu_session.hxx"

#include "harness/core/child_process.hxx"
#include "harness/core/text.hxx"
#include "harness/run/l2_sweep.hxx"

#include <algorithm>
#include <cstdlib>
#include <fmt/format.h>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

namespace harness::run {

namespace {

/// FP32 units per SM (CUDA programming guide, arithmetic instruction throughput).
int fp32_lanes_per_sm(const std::string& arch)
{
    if (arch == "sm_70" || arch == "sm_72" || arch == "sm_75" || arch == "sm_80") return 64;
    return 128; // sm_86, sm_87, sm_89, sm_90, sm_100, sm_120
}

} // namespace

DeviceInfo query_device(int ordinal)
{
    const Driver& d = driver();
    int count = 0;
    CU_CHECK(d.cuDeviceGetCount(&count));
    if (ordinal < 0 || ordinal >= count)
        throw Error(ErrorKind::environment, fmt::format("no CUDA device {} (the driver sees {})", ordinal, count));
    CUdevice dev = 0;
    CU_CHECK(d.cuDeviceGet(&dev, ordinal));
    DeviceInfo info;
    info.ordinal = ordinal;
    info.device_count = count;
    char name[256] = {};
    CU_CHECK(d.cuDeviceGetName(name, sizeof name, dev));
    info.name = name;
    auto attr = [&](CUdevice_attribute a) {
        int v = 0;
        CU_CHECK(d.cuDeviceGetAttribute(&v, a, dev));
        return v;
    };
    info.arch = fmt::format("sm_{}{}", attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                            attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
    info.sm_count = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    info.max_warps_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR) / 32;
    info.l2_bytes = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    // kHz * bits / 8 * 2 (double data rate) -> GB/s
    info.memory_bandwidth_gbs = 2.0 * attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) * 1e3 *
                                (attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) / 8.0) / 1e9;
    info.clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    info.fp32_peak_gflops = info.sm_count * fp32_lanes_per_sm(info.arch) * 2.0 * info.clock_khz * 1e3 / 1e9;
    CU_CHECK(d.cuDriverGetVersion(&info.driver_version));
    char bus_id[64] = {};
    CU_CHECK(d.cuDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
    info.pci_bus_id = bus_id;
    return info;
}

std::optional<std::string> visible_device_entry(const char* visible, int ordinal)
{
    if (ordinal < 0) return std::nullopt;
    if (!visible) return std::to_string(ordinal);
    // The driver reads the list up to its first entry that names no GPU, so the GPU at `ordinal`
    // is the list's entry at `ordinal`.
    std::string_view rest = visible;
    for (int i = 0;; ++i) {
        const auto comma = rest.find(',');
        const std::string_view entry = trim(rest.substr(0, comma));
        if (i == ordinal) return entry.empty() ? std::nullopt : std::optional<std::string>(entry);
        if (comma == std::string_view::npos) return std::nullopt;
        rest.remove_prefix(comma + 1);
    }
}

int confine_to_device(int ordinal)
{
    if (driver_started()) return ordinal;
    const auto entry = visible_device_entry(std::getenv("CUDA_VISIBLE_DEVICES"), ordinal);
    if (!entry || setenv("CUDA_VISIBLE_DEVICES", entry->c_str(), 1) != 0) return ordinal;
    return 0;
}

GpuSession::GpuSession(int ordinal)
{
    const Driver& d = driver();
    info_ = query_device(ordinal);
    CU_CHECK(d.cuDeviceGet(&device_, ordinal));
    CU_CHECK(d.cuDevicePrimaryCtxRetain(&context_, device_));
    CU_CHECK(d.cuCtxSetCurrent(context_));
    CU_CHECK(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
    CU_CHECK(d.cuEventCreate(&start_, CU_EVENT_DEFAULT));
    CU_CHECK(d.cuEventCreate(&stop_, CU_EVENT_DEFAULT));
    flush_words_ = static_cast<std::size_t>(std::max(info_.l2_bytes, 1 << 20)) * 2 / 16;
    CU_CHECK(d.cuMemAlloc(&flush_buffer_, flush_words_ * 16));
    CU_CHECK(d.cuMemsetD8(flush_buffer_, 0, flush_words_ * 16));
    CU_CHECK(d.cuMemAlloc(&sink_, sizeof(std::uint32_t)));
    CU_CHECK(d.cuModuleLoadData(&sweep_module_, std::string(l2_sweep_ptx()).c_str()));
    CU_CHECK(d.cuModuleGetFunction(&sweep_, sweep_module_, l2_sweep_entry));
}

GpuSession::GpuSession(int ordinal, const std::string& pci_bus_id)
    : GpuSession(pci_bus_id.empty() ? ordinal : confine_to_device(ordinal))
{
    if (!pci_bus_id.empty() && info_.pci_bus_id != pci_bus_id)
        throw Error(ErrorKind::environment,
                    fmt::format("GPU {} is at PCI bus {} in this process, not at {} as when it was probed; "
                                "CUDA_VISIBLE_DEVICES ({}) names the GPUs in another way than expected",
                                ordinal, info_.pci_bus_id, pci_bus_id,
                                std::getenv("CUDA_VISIBLE_DEVICES") ? std::getenv("CUDA_VISIBLE_DEVICES") : "unset"));
}

GpuSession::~GpuSession()
{
    // Best effort: after a fault the context is gone and these calls fail; the process ends anyway.
    const Driver& d = driver();
    if (flush_buffer_) d.cuMemFree(flush_buffer_);
    if (sink_) d.cuMemFree(sink_);
    if (sweep_module_) d.cuModuleUnload(sweep_module_);
    if (start_) d.cuEventDestroy(start_);
    if (stop_) d.cuEventDestroy(stop_);
    if (stream_) d.cuStreamDestroy(stream_);
    if (context_) d.cuDevicePrimaryCtxRelease(device_);
}

void GpuSession::flush_l2()
{
    // A memset would leave the L2 full of dirty lines that the next kernel then writes back, as
    // if it were its own traffic; reads replace them with clean lines (writing them back now).
    void* args[] = {&flush_buffer_, &flush_words_, &sink_};
    const unsigned blocks = static_cast<unsigned>(std::max(info_.sm_count, 1)) * 4;
    CU_CHECK(driver().cuLaunchKernel(sweep_, blocks, 1, 1, 512, 1, 1, 0, stream_, args, nullptr));
}

void GpuSession::launch_marker()
{
    std::size_t none = 0;
    void* args[] = {&flush_buffer_, &none, &sink_};
    CU_CHECK(driver().cuLaunchKernel(sweep_, 1, 1, 1, 32, 1, 1, 0, stream_, args, nullptr));
}

void to_json(nlohmann::json& j, const DeviceInfo& d)
{
    j = {{"ordinal", d.ordinal},
         {"name", d.name},
         {"arch", d.arch},
         {"sm_count", d.sm_count},
         {"max_warps_per_sm", d.max_warps_per_sm},
         {"l2_bytes", d.l2_bytes},
         {"driver_version", d.driver_version},
         {"memory_bandwidth_gbs", d.memory_bandwidth_gbs},
         {"clock_khz", d.clock_khz},
         {"fp32_peak_gflops", d.fp32_peak_gflops},
         {"device_count", d.device_count},
         {"pci_bus_id", d.pci_bus_id}};
}

void from_json(const nlohmann::json& j, DeviceInfo& d)
{
    d.ordinal = j.at("ordinal");
    d.name = j.at("name");
    d.arch = j.at("arch");
    d.sm_count = j.at("sm_count");
    d.max_warps_per_sm = j.at("max_warps_per_sm");
    d.l2_bytes = j.at("l2_bytes");
    d.driver_version = j.at("driver_version");
    d.memory_bandwidth_gbs = j.at("memory_bandwidth_gbs");
    d.clock_khz = j.value("clock_khz", 0);
    d.fp32_peak_gflops = j.value("fp32_peak_gflops", 0.0);
    d.device_count = j.value("device_count", 1);
    d.pci_bus_id = j.value("pci_bus_id", "");
}

namespace {

/// GPUs probed so far in this process, by ordinal: their facts do not change while it runs.
std::map<int, DeviceInfo> probed_devices;
std::mutex probed_mutex;

} // namespace

std::vector<std::optional<DeviceInfo>> probe_devices(const std::vector<int>& ordinals, std::vector<std::string>& why)
{
    const std::lock_guard lock(probed_mutex);
    why.assign(ordinals.size(), "");
    if (std::all_of(ordinals.begin(), ordinals.end(), [](int o) { return probed_devices.contains(o); })) {
        std::vector<std::optional<DeviceInfo>> known;
        for (const int ordinal : ordinals) known.push_back(probed_devices.at(ordinal));
        return known;
    }
    // The probe's child stays for the rest of the run once it has started the driver: while one
    // process on the host holds the driver, every later start is cheaper. Measured on four H100s
    // (persistence mode on): the driver's start seeing the four GPUs 0.55 -> 0.065 s, a worker's
    // confined to one 0.155 -> 0.057 s, four such workers with a context each 1.1 -> 0.63 s. A
    // context held as well gained nothing more.
    const std::string text = run_in_staying_child("device probe", [&](bool& stay) {
        nlohmann::json answers = nlohmann::json::array();
        for (const int ordinal : ordinals) {
            try {
                answers.push_back({{"device", query_device(ordinal)}});
                stay = true;
            } catch (const std::exception& e) {
                answers.push_back({{"error", e.what()}});
            }
        }
        return answers.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    });
    const auto answers = nlohmann::json::parse(text);
    std::vector<std::optional<DeviceInfo>> devices;
    for (std::size_t i = 0; i < ordinals.size(); ++i) {
        const auto& answer = answers.at(i);
        if (answer.contains("device")) {
            devices.push_back(answer.at("device").get<DeviceInfo>());
            probed_devices[ordinals[i]] = *devices.back();
        } else {
            devices.push_back(std::nullopt);
            why[i] = answer.at("error").get<std::string>();
        }
    }
    return devices;
}

std::optional<DeviceInfo> probe_device(int ordinal, std::string* why)
{
    std::vector<std::string> reasons;
    auto devices = probe_devices({ordinal}, reasons);
    if (!devices.front() && why) *why = reasons.front();
    return devices.front();
}

} // namespace harness::run
