#pragma once
// One GPU, its primary context, a stream, events and an L2 flush: what running cases needs.

#include "harness/run/driver.hxx"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace harness::run {

/// Facts about the device, for reports and baseline keys.
struct DeviceInfo {
    int ordinal = 0;
    std::string name;
    std::string arch; ///< "sm_90"
    int sm_count = 0;
    int max_warps_per_sm = 0;
    int l2_bytes = 0;
    int driver_version = 0;            ///< e.g. 13000
    double memory_bandwidth_gbs = 0.0; ///< theoretical, from clock and bus width
    int clock_khz = 0;                 ///< SM boost clock
    double fp32_peak_gflops = 0.0;     ///< theoretical: SMs x FP32 lanes x 2 (FMA) x clock
    int device_count = 1;              ///< CUDA devices the driver sees on this host
    std::string pci_bus_id;            ///< e.g. "0000:19:00.0": the same GPU in every process
};

/// Owns the context and the per-process resources; create only in a worker process.
class GpuSession {
public:
    explicit GpuSession(int ordinal);
    /// The GPU at `ordinal` of the parent's view, in a worker process that has not started the
    /// driver yet: the process is confined to that one GPU first (confine_to_device), and the
    /// session checks by `pci_bus_id` that it opened the GPU the parent probed.
    GpuSession(int ordinal, const std::string& pci_bus_id);
    ~GpuSession();
    GpuSession(const GpuSession&) = delete;
    GpuSession& operator=(const GpuSession&) = delete;

    const DeviceInfo& info() const { return info_; }
    CUdevice device() const { return device_; }
    CUcontext context() const { return context_; }
    CUstream stream() const { return stream_; }
    CUevent start_event() const { return start_; }
    CUevent stop_event() const { return stop_; }

    /// Reads a buffer twice the L2 size on the stream, so the next kernel starts with a cold L2
    /// that holds no dirty line: none of the DRAM traffic the kernel causes is left over from
    /// before it (restored inputs, earlier cases), as under Nsight Compute's cache control.
    void flush_l2();
    /// Launches the sweep kernel over nothing: a kernel that marks where a timed step begins in a
    /// sequence of per-kernel ranges when the L2 is not flushed (--hot).
    void launch_marker();

private:
    DeviceInfo info_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    CUstream stream_ = nullptr;
    CUevent start_ = nullptr;
    CUevent stop_ = nullptr;
    CUmodule sweep_module_ = nullptr;
    CUfunction sweep_ = nullptr;
    CUdeviceptr flush_buffer_ = 0;
    std::size_t flush_words_ = 0; ///< 16-byte words
    CUdeviceptr sink_ = 0;
};

/// Reads the device's facts. Initialises the driver: call only in a worker process.
DeviceInfo query_device(int ordinal);

/// Asks a short-lived child process for the device's facts, so this process never initialises
/// CUDA (a CUDA context does not survive fork). nullopt with `why` set when there is no usable GPU.
std::optional<DeviceInfo> probe_device(int ordinal, std::string* why);

/// probe_device for several GPUs in one child: the driver starts once, not once per GPU (on a
/// four-GPU host each start sets up every GPU). An entry is nullopt, its `why` set, when that GPU
/// is not usable. GPUs probed before in this process are answered without a child.
std::vector<std::optional<DeviceInfo>> probe_devices(const std::vector<int>& ordinals, std::vector<std::string>& why);

/// What CUDA_VISIBLE_DEVICES must hold for a process to see only the GPU at `ordinal` of a process
/// whose CUDA_VISIBLE_DEVICES is `visible` (null when unset): that entry of its list, or the
/// ordinal itself. nullopt when the list has no such entry.
std::optional<std::string> visible_device_entry(const char* visible, int ordinal);

/// Makes the GPU at `ordinal` the only one this process's driver will set up, by narrowing
/// CUDA_VISIBLE_DEVICES, and returns the ordinal that GPU has in this process (0). Initialising the
/// driver sets up every visible GPU: measured on a four-H100 host, a worker's context took 1.0 s
/// alone and 1.7 s each beside three others, against about 0.3 s on a one-GPU machine. Returns
/// `ordinal` unchanged where the driver has already started in this process or the list has no
/// such entry.
int confine_to_device(int ordinal);

void to_json(nlohmann::json& j, const DeviceInfo& d);
void from_json(const nlohmann::json& j, DeviceInfo& d);

} // namespace harness::run
