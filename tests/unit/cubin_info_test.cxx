// The cubin reader against ptxas' own report: kernels are compiled with NVRTC here (no GPU needed)
// for sm_80, sm_90 and sm_100, and what the ELF says must equal what ptxas -v said.

#include "harness/compile/cubin_info.hxx"
#include "harness/core/child_process.hxx"

#include <gtest/gtest.h>
#include <nvrtc.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace harness::compile {
namespace cubin_info_test {
namespace {

// Each kernel shows one resource the reader must find.
constexpr const char* test_kernels = R"(
// A 33 x 32 float tile (the padded transpose layout): 4224 bytes of static shared memory, one barrier.
extern "C" __global__ void tile_sum(const float* in, float* out)
{
    __shared__ float tile[33 * 32];
    const int t = threadIdx.x;
    tile[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    tile[t + 32] += tile[(t * 33) % 1056];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = tile[(t + 1) % 1056];
}

// Nothing but 20 bytes of parameters (two pointers, one int).
extern "C" __global__ void copy(const float* in, float* out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

// 64 live accumulators do not fit in 32 registers: ptxas spills them under -maxrregcount=32.
template <int N>
__global__ void many_accumulators(const float* in, float* out, int k)
{
    float acc[N];
#pragma unroll
    for (int j = 0; j < N; ++j) acc[j] = in[threadIdx.x + j * 97];
    for (int it = 0; it < k; ++it) {
#pragma unroll
        for (int j = 0; j < N; ++j) acc[j] = acc[j] * acc[(j + it) % N] + acc[(j * 7 + 1) % N];
    }
    float sum = 0;
#pragma unroll
    for (int j = 0; j < N; ++j) sum += acc[j] * j;
    out[threadIdx.x] = sum;
}

// A local array indexed at run time lives in the stack frame without being a spill.
__global__ void indexed_local_array(const int* index, float* out)
{
    float values[100];
    for (int j = 0; j < 100; ++j) values[j] = j * 0.5f;
    out[threadIdx.x] = values[index[threadIdx.x] % 100];
}

// bar.sync 15 makes ptxas reserve named barriers 0..15.
extern "C" __global__ void sixteen_barriers(float* out)
{
    out[threadIdx.x] = 1.f;
    asm volatile("bar.sync 15;" ::: "memory");
    out[threadIdx.x + 1] = 2.f;
}

namespace demo {
__global__ void nested(float* out) { out[threadIdx.x] = 3.f; }
}
)";

const std::vector<std::string> name_expressions{"many_accumulators<64>", "indexed_local_array", "demo::nested"};

struct Compiled {
    std::string cubin;
    std::string log;
    std::map<std::string, std::string> lowered_names;
};

void check_nvrtc(nvrtcResult result, const char* call, nvrtcProgram program = nullptr)
{
    if (result == NVRTC_SUCCESS) return;
    std::string message = std::string(call) + ": " + nvrtcGetErrorString(result);
    if (program) {
        std::size_t size = 0;
        nvrtcGetProgramLogSize(program, &size);
        std::string log(size, '\0');
        nvrtcGetProgramLog(program, log.data());
        message += "\n" + log;
    }
    throw std::runtime_error(message);
}

// Compiles test_kernels once per option set; cubins for one architecture are reused across tests.
const Compiled& compile(const std::string& arch, bool cap_registers_at_32)
{
    static std::map<std::pair<std::string, bool>, Compiled> cache;
    auto key = std::make_pair(arch, cap_registers_at_32);
    if (auto it = cache.find(key); it != cache.end()) return it->second;

    nvrtcProgram program = nullptr;
    check_nvrtc(nvrtcCreateProgram(&program, test_kernels, "test_kernels.cu", 0, nullptr, nullptr),
                "nvrtcCreateProgram");
    for (const std::string& expression : name_expressions)
        check_nvrtc(nvrtcAddNameExpression(program, expression.c_str()), "nvrtcAddNameExpression");
    std::vector<std::string> options{"--gpu-architecture=" + arch, "-Xptxas=-v"};
    if (cap_registers_at_32) options.push_back("-maxrregcount=32");
    std::vector<const char*> option_pointers;
    for (const std::string& option : options) option_pointers.push_back(option.c_str());
    const nvrtcResult compiled =
        nvrtcCompileProgram(program, static_cast<int>(option_pointers.size()), option_pointers.data());
    check_nvrtc(compiled, "nvrtcCompileProgram", program);

    Compiled result;
    std::size_t size = 0;
    check_nvrtc(nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize");
    result.log.resize(size);
    check_nvrtc(nvrtcGetProgramLog(program, result.log.data()), "nvrtcGetProgramLog");
    check_nvrtc(nvrtcGetCUBINSize(program, &size), "nvrtcGetCUBINSize");
    result.cubin.resize(size);
    check_nvrtc(nvrtcGetCUBIN(program, result.cubin.data()), "nvrtcGetCUBIN");
    for (const std::string& expression : name_expressions) {
        const char* lowered = nullptr;
        check_nvrtc(nvrtcGetLoweredName(program, expression.c_str(), &lowered), "nvrtcGetLoweredName");
        result.lowered_names[expression] = lowered;
    }
    nvrtcDestroyProgram(&program);
    return cache.emplace(key, std::move(result)).first->second;
}

const KernelResources* logged_kernel(const std::vector<KernelResources>& logged, const std::string& name)
{
    auto it = std::find_if(logged.begin(), logged.end(), [&](const KernelResources& k) { return k.name == name; });
    return it == logged.end() ? nullptr : &*it;
}

class CubinAgainstPtxas : public testing::TestWithParam<std::string> {};

TEST_P(CubinAgainstPtxas, EveryKernelMatchesThePtxasReport)
{
    for (bool capped : {false, true}) {
        const Compiled& compiled = compile(GetParam(), capped);
        const CubinInfo info = read_cubin_info(compiled.cubin);
        const std::vector<KernelResources> logged = parse_ptxas_log(compiled.log);
        ASSERT_EQ(logged.size(), 6u) << compiled.log;
        ASSERT_EQ(info.kernels.size(), logged.size());
        EXPECT_EQ("sm_" + std::to_string(info.sm_version), GetParam());

        for (const KernelResources& kernel : info.kernels) {
            SCOPED_TRACE(kernel.name + (capped ? " with -maxrregcount=32" : ""));
            const KernelResources* report = logged_kernel(logged, kernel.name);
            ASSERT_NE(report, nullptr) << "kernel missing from the ptxas report";
            EXPECT_GT(kernel.registers, 0);
            EXPECT_EQ(kernel.registers, report->registers);
            EXPECT_EQ(kernel.static_shared_bytes, report->static_shared_bytes);
            EXPECT_EQ(kernel.local_bytes, report->local_bytes);
            EXPECT_EQ(kernel.max_stack_bytes, report->max_stack_bytes);
            EXPECT_EQ(kernel.barriers, report->barriers);
            EXPECT_FALSE(kernel.spill_store_bytes.has_value()) << "the ELF holds no spill counts";
            ASSERT_TRUE(report->spill_store_bytes && report->spill_load_bytes);
            if (capped) {
                EXPECT_LE(kernel.registers, 32);
            }
        }
    }
}

TEST_P(CubinAgainstPtxas, StaticSharedArrayAndBarrier)
{
    const CubinInfo info = read_cubin_info(compile(GetParam(), false).cubin);
    const KernelResources& tile_sum = info.kernel("tile_sum");
    EXPECT_EQ(tile_sum.static_shared_bytes, 4224); // 33 * 32 * sizeof(float)
    EXPECT_EQ(tile_sum.barriers, 1);
    EXPECT_EQ(tile_sum.local_bytes, 0);
    EXPECT_EQ(info.kernel("copy").static_shared_bytes, 0);
    EXPECT_EQ(info.kernel("copy").barriers, 0);
    EXPECT_EQ(info.kernel("sixteen_barriers").barriers, 16);
}

TEST_P(CubinAgainstPtxas, ParameterBytes)
{
    const CubinInfo info = read_cubin_info(compile(GetParam(), false).cubin);
    EXPECT_EQ(info.kernel("copy").param_bytes, 20);     // two pointers and an int
    EXPECT_EQ(info.kernel("tile_sum").param_bytes, 16); // two pointers
}

TEST_P(CubinAgainstPtxas, EachParameterWithItsOrdinalOffsetAndSize)
{
    const Compiled& compiled = compile(GetParam(), false);
    const CubinInfo info = read_cubin_info(compiled.cubin);
    const auto sizes = [&](std::string_view kernel) {
        std::vector<std::pair<int, int>> offset_and_size;
        const auto& parameters = info.kernel(kernel).parameters;
        EXPECT_TRUE(parameters.has_value()) << kernel;
        for (std::size_t i = 0; parameters && i < parameters->size(); ++i) {
            EXPECT_EQ((*parameters)[i].ordinal, static_cast<int>(i));
            offset_and_size.emplace_back((*parameters)[i].offset, (*parameters)[i].size_bytes);
        }
        return offset_and_size;
    };
    using Sizes = std::vector<std::pair<int, int>>;
    EXPECT_EQ(sizes("copy"), (Sizes{{0, 8}, {8, 8}, {16, 4}})); // two pointers and an int
    EXPECT_EQ(sizes("tile_sum"), (Sizes{{0, 8}, {8, 8}}));
    EXPECT_EQ(sizes("sixteen_barriers"), (Sizes{{0, 8}}));
    EXPECT_EQ(sizes(compiled.lowered_names.at("many_accumulators<64>")), (Sizes{{0, 8}, {8, 8}, {16, 4}}));
}

TEST_P(CubinAgainstPtxas, SpillsComeFromThePtxasReport)
{
    const Compiled& compiled = compile(GetParam(), true);
    CubinInfo info = read_cubin_info(compiled.cubin);
    const std::string spiller = compiled.lowered_names.at("many_accumulators<64>");
    const KernelResources& before = info.kernel(spiller);
    EXPECT_LE(before.registers, 32);
    EXPECT_GT(before.local_bytes, 0) << "spilled values live in the stack frame";
    EXPECT_FALSE(before.spill_store_bytes.has_value());

    const std::vector<KernelResources> logged = parse_ptxas_log(compiled.log);
    merge_ptxas_log(info, logged);
    const KernelResources& after = info.kernel(spiller);
    ASSERT_TRUE(after.spill_store_bytes.has_value());
    ASSERT_TRUE(after.spill_load_bytes.has_value());
    EXPECT_GT(*after.spill_store_bytes, 0);
    EXPECT_GT(*after.spill_load_bytes, 0);
    EXPECT_EQ(after.spill_store_bytes, logged_kernel(logged, spiller)->spill_store_bytes);

    // A local array is stack, not spill.
    const KernelResources& local = info.kernel(compiled.lowered_names.at("indexed_local_array"));
    EXPECT_GE(local.local_bytes, 400);
    EXPECT_EQ(local.spill_store_bytes, 0);
}

TEST_P(CubinAgainstPtxas, LookupByLoweredAndBaseName)
{
    const Compiled& compiled = compile(GetParam(), false);
    const CubinInfo info = read_cubin_info(compiled.cubin);
    for (const auto& [expression, lowered] : compiled.lowered_names) {
        const KernelResources* kernel = info.find(lowered);
        ASSERT_NE(kernel, nullptr) << expression << " lowered to " << lowered;
        EXPECT_EQ(kernel->name, lowered);
    }
    EXPECT_EQ(info.kernel("indexed_local_array").name, compiled.lowered_names.at("indexed_local_array"));
    EXPECT_EQ(info.kernel("demo::nested").name, compiled.lowered_names.at("demo::nested"));
    EXPECT_EQ(info.kernel("many_accumulators").name, compiled.lowered_names.at("many_accumulators<64>"));
    EXPECT_EQ(info.find("no_such_kernel"), nullptr);
    try {
        (void)info.kernel("tile_summ");
        FAIL() << "an unknown kernel must throw";
    } catch (const CubinError& error) {
        const std::string what = error.what();
        EXPECT_NE(what.find("'tile_summ' is not in the " + GetParam() + " cubin"), std::string::npos) << what;
        EXPECT_NE(what.find("did you mean 'tile_sum'"), std::string::npos) << what;
        EXPECT_EQ(error.kind(), ErrorKind::bad_input);
    }
}

// The numbers behind the report: the same source, per architecture.
TEST_P(CubinAgainstPtxas, PrintsResourcesPerArchitecture)
{
    for (bool capped : {false, true}) {
        const Compiled& compiled = compile(GetParam(), capped);
        CubinInfo info = read_cubin_info(compiled.cubin);
        merge_ptxas_log(info, parse_ptxas_log(compiled.log));
        for (const KernelResources& k : info.kernels) {
            std::cout << GetParam() << (capped ? " maxrreg=32 " : "            ") << demangled_base_name(k.name) << ": "
                      << k.registers << " registers, " << k.static_shared_bytes << " B smem, " << k.local_bytes
                      << " B frame, " << k.max_stack_bytes << " B stack, " << k.barriers << " barriers, "
                      << k.param_bytes << " B params, spills " << k.spill_store_bytes.value_or(-1) << "/"
                      << k.spill_load_bytes.value_or(-1) << " B\n";
        }
        ASSERT_FALSE(info.kernels.empty());
    }
}

INSTANTIATE_TEST_SUITE_P(Architectures, CubinAgainstPtxas, testing::Values("sm_80", "sm_90", "sm_100"),
                         [](const testing::TestParamInfo<std::string>& info) { return info.param; });

// Replaces every EIATTR_REGCOUNT record (format SVAL 0x04, id 0x2f, 8-byte payload) with an
// attribute the reader ignores, so only the .text section's SHI_REGISTERS is left.
std::string without_regcount_attributes(std::string cubin)
{
    const char pattern[] = {0x04, 0x2f, 0x08, 0x00};
    std::size_t replaced = 0;
    for (std::size_t at = cubin.find(pattern, 0, 4); at != std::string::npos; at = cubin.find(pattern, at + 4, 4)) {
        cubin[at + 1] = 0x01; // EIATTR_PAD
        ++replaced;
    }
    EXPECT_GT(replaced, 0u);
    return cubin;
}

TEST(CubinInfo, Sm80RegistersFallBackToTextSectionInfo)
{
    const Compiled& compiled = compile("sm_80", false);
    const CubinInfo full = read_cubin_info(compiled.cubin);
    const CubinInfo fallback = read_cubin_info(without_regcount_attributes(compiled.cubin));
    ASSERT_EQ(full.kernels.size(), fallback.kernels.size());
    for (std::size_t i = 0; i < full.kernels.size(); ++i)
        EXPECT_EQ(full.kernels[i].registers, fallback.kernels[i].registers) << full.kernels[i].name;
}

TEST(CubinInfo, Sm90WithoutRegcountIsAnError)
{
    // sm_90 cubins keep no register count in the .text section, so losing EIATTR_REGCOUNT is fatal.
    const std::string damaged = without_regcount_attributes(compile("sm_90", false).cubin);
    try {
        (void)read_cubin_info(damaged);
        FAIL() << "expected a CubinError";
    } catch (const CubinError& error) {
        EXPECT_NE(std::string(error.what()).find("no register count"), std::string::npos) << error.what();
    }
}

std::string error_of(const std::string& bytes)
{
    try {
        (void)read_cubin_info(bytes);
    } catch (const CubinError& error) {
        return error.what();
    }
    return "";
}

TEST(CubinInfo, MalformedInputsAreNamedErrors)
{
    const std::string cubin = compile("sm_90", false).cubin;
    EXPECT_NE(error_of("").find("cubin: is empty"), std::string::npos);
    EXPECT_NE(error_of("__global__ void k() {}" + std::string(64, ' ')).find("not an ELF file"), std::string::npos);
    EXPECT_NE(error_of(cubin.substr(0, 40)).find("shorter than an ELF64 header"), std::string::npos);
    EXPECT_NE(error_of(cubin.substr(0, cubin.size() / 2)).find("truncated"), std::string::npos);

    std::string elf32 = cubin;
    elf32[4] = 1; // ELFCLASS32
    EXPECT_NE(error_of(elf32).find("not a 64-bit ELF"), std::string::npos);

    std::string x86 = cubin;
    x86[18] = 62; // EM_X86_64
    x86[19] = 0;
    EXPECT_NE(error_of(x86).find("machine 62, not CUDA"), std::string::npos);

    std::string far_sections = cubin;
    std::memset(far_sections.data() + 0x28, 0x7f, 8); // e_shoff far beyond the file
    EXPECT_NE(error_of(far_sections).find("truncated or corrupt"), std::string::npos);
}

TEST(CubinInfo, DamagedCubinsThrowOrParseButNeverCrash)
{
    // Every prefix and random byte corruption: the reader may throw CubinError or succeed, nothing else.
    const std::string cubin = compile("sm_80", true).cubin;
    int errors = 0;
    for (std::size_t length = 0; length < cubin.size(); length += 61) {
        try {
            (void)read_cubin_info(cubin.substr(0, length));
        } catch (const CubinError&) {
            ++errors;
        }
    }
    EXPECT_GT(errors, 0);

    std::mt19937 random(20240613);
    std::uniform_int_distribution<std::size_t> position(0, cubin.size() - 1);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int trial = 0; trial < 400; ++trial) {
        std::string damaged = cubin;
        for (int flips = 0; flips < 8; ++flips) damaged[position(random)] = static_cast<char>(byte(random));
        try {
            (void)read_cubin_info(damaged);
        } catch (const CubinError&) {
        }
    }
}

TEST(PtxasLog, ParsesEntryFunctionsAndSkipsDeviceFunctions)
{
    const std::string log =
        R"(ptxas info    : Overriding maximum register limit 256 for 'calls' with  32 of maxrregcount option
ptxas info    : 5922 bytes gmem
ptxas info    : Compiling entry function 'recursive' for 'sm_80'
ptxas info    : Function properties for recursive
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 24 registers, used 0 barriers, 364 bytes cmem[0]
ptxas info    : Function properties for _Z3reci
ptxas         .     72 bytes stack frame, 20 bytes spill stores, 20 bytes spill loads
ptxas info    : Compiling entry function '_Z5spillILi64EEvPKfPfi' for 'sm_90'
ptxas info    : Function properties for _Z5spillILi64EEvPKfPfi
ptxas         .     608 bytes stack frame, 712 bytes spill stores, 768 bytes spill loads
ptxas info    : Used 32 registers, used 0 barriers, 608 bytes cumulative stack size
ptxas info    : Compile time = 41.065 ms
ptxas info    : Compiling entry function '_Z8tile_sumPKfPf' for 'sm_90'
ptxas info    : Function properties for _Z8tile_sumPKfPf
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 4224 bytes smem, 368 bytes cmem[0], 8 bytes cmem[2]
)";
    const std::vector<KernelResources> kernels = parse_ptxas_log(log);
    ASSERT_EQ(kernels.size(), 3u);

    EXPECT_EQ(kernels[0].name, "recursive");
    EXPECT_EQ(kernels[0].registers, 24);
    EXPECT_EQ(kernels[0].local_bytes, 0) << "the device function's 72-byte frame is not the kernel's";
    EXPECT_EQ(kernels[0].spill_store_bytes, 0);

    EXPECT_EQ(kernels[1].name, "_Z5spillILi64EEvPKfPfi");
    EXPECT_EQ(kernels[1].registers, 32);
    EXPECT_EQ(kernels[1].local_bytes, 608);
    EXPECT_EQ(kernels[1].max_stack_bytes, 608);
    EXPECT_EQ(kernels[1].spill_store_bytes, 712);
    EXPECT_EQ(kernels[1].spill_load_bytes, 768);

    EXPECT_EQ(kernels[2].name, "_Z8tile_sumPKfPf");
    EXPECT_EQ(kernels[2].registers, 12);
    EXPECT_EQ(kernels[2].barriers, 1);
    EXPECT_EQ(kernels[2].static_shared_bytes, 4224);
    EXPECT_EQ(kernels[2].max_stack_bytes, 0);
}

TEST(PtxasLog, IgnoresTextThatIsNotAReport)
{
    EXPECT_TRUE(parse_ptxas_log("").empty());
    EXPECT_TRUE(
        parse_ptxas_log("test.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n").empty());
    EXPECT_TRUE(parse_ptxas_log("ptxas info    : Used 10 registers\n").empty()) << "no entry function announced";
}

TEST(DemangledBaseName, KernelNames)
{
    EXPECT_EQ(demangled_base_name("_Z8tile_sumPKfPf"), "tile_sum");
    EXPECT_EQ(demangled_base_name("_Z5spillILi64EEvPKfPfi"), "spill");
    EXPECT_EQ(demangled_base_name("_ZN4demo6nestedEPf"), "demo::nested");
    EXPECT_EQ(demangled_base_name("_ZN2ns4gemmILi32EEvPf"), "ns::gemm");
    EXPECT_EQ(demangled_base_name("copy"), "copy");
    EXPECT_EQ(demangled_base_name("_Z99short"), "_Z99short") << "a length past the end leaves the name as is";
}

// A CUDA ELF64 whose `headers` section headers all name one string of `name_bytes` letters, held
// by section 1, a string table; with `kernel_symbols`, section 2 is a symbol table of that many
// entry functions, each named by that string too. Nothing else: what a reader of the names meets
// before anything else is looked at.
std::string one_name_for_everything(std::size_t name_bytes, std::size_t headers, std::size_t kernel_symbols)
{
    const auto put = [](std::string& bytes, std::size_t at, std::uint64_t value, int width) {
        for (int i = 0; i < width; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>(value >> (8 * i));
    };
    const std::size_t strings = 64, symbols = (strings + name_bytes + 1 + 7) / 8 * 8;
    const std::size_t section_table = symbols + kernel_symbols * 24;
    std::string bytes(section_table + headers * 64, '\0');
    bytes.replace(0, 4,
                  "\x7f"
                  "ELF");
    bytes[4] = 2;           // ELFCLASS64
    bytes[5] = 1;           // little-endian
    bytes[6] = 1;           // EV_CURRENT
    bytes[7] = 0x33;        // CUDA
    bytes[8] = 8;           // ABI version 8: the SM number in e_flags bits 8-15
    put(bytes, 16, 2, 2);   // ET_EXEC
    put(bytes, 18, 190, 2); // EM_CUDA
    put(bytes, 0x28, section_table, 8);
    put(bytes, 0x30, 90 << 8, 4);
    put(bytes, 0x34, 64, 2); // e_ehsize
    put(bytes, 0x3a, 64, 2); // e_shentsize
    put(bytes, 0x3c, headers, 2);
    put(bytes, 0x3e, 1, 2); // e_shstrndx
    bytes.replace(strings, name_bytes, name_bytes, 'A');
    for (std::size_t i = 0; i < kernel_symbols; ++i) {
        bytes[symbols + i * 24 + 4] = 0x12; // STB_GLOBAL, STT_FUNC
        bytes[symbols + i * 24 + 5] = 0x10; // an entry function
    }
    for (std::size_t i = 0; i < headers; ++i) {
        const std::size_t at = section_table + i * 64;
        const bool symbol_table = i == 2 && kernel_symbols > 0;
        put(bytes, at + 4, symbol_table ? 2 : 3, 4); // SHT_SYMTAB, else SHT_STRTAB
        put(bytes, at + 24, symbol_table ? symbols : strings, 8);
        put(bytes, at + 32, symbol_table ? kernel_symbols * 24 : name_bytes + 1, 8);
        if (symbol_table) put(bytes, at + 40, 1, 4);  // sh_link: the names in section 1
        if (symbol_table) put(bytes, at + 56, 24, 8); // sh_entsize
    }
    return bytes;
}

/// What read_cubin_info makes of `bytes` in a child process whose address space may grow by
/// `mib` MiB only: "read", "refused: <message>", or "out of memory".
std::string read_within(const std::string& bytes, std::size_t mib)
{
    return run_in_child("reading a cubin", [&]() -> std::string {
        std::ifstream status("/proc/self/status");
        std::size_t used_kib = 0;
        for (std::string line; std::getline(status, line);)
            if (line.starts_with("VmSize:")) used_kib = std::stoul(line.substr(7));
        const rlim_t limit = static_cast<rlim_t>(used_kib * 1024 + (mib << 20));
        const rlimit address_space{limit, limit};
        if (used_kib == 0 || ::setrlimit(RLIMIT_AS, &address_space) != 0) return "no limit";
        try {
            (void)read_cubin_info(bytes);
            return "read";
        } catch (const CubinError& e) {
            return std::string("refused: ") + e.what();
        } catch (const std::bad_alloc&) {
            return "out of memory";
        }
    });
}

TEST(CubinInfo, SectionsThatAllNameOneLongStringAreRefusedInMemoryOfTheFilesSize)
{
    // 4096 headers naming one 256 KiB string: 1 GiB of names, were each copied, in a 512 KiB file.
    const std::string cubin = one_name_for_everything(256 * 1024, 4096, 0);
    const std::string outcome = read_within(cubin, 64);
    EXPECT_TRUE(outcome.starts_with("refused: cubin: truncated or corrupt: its section names add up to more than 8 "
                                    "times the file's size"))
        << outcome;
}

TEST(CubinInfo, KernelSymbolsThatAllNameOneLongStringAreRefusedInMemoryOfTheFilesSize)
{
    // 2048 entry functions named by one 256 KiB string: 512 MiB of kernel names in a 304 KiB file.
    const std::string cubin = one_name_for_everything(256 * 1024, 3, 2048);
    const std::string outcome = read_within(cubin, 64);
    EXPECT_TRUE(outcome.starts_with("refused: cubin: truncated or corrupt: its kernel names add up to more than "
                                    "the file's size"))
        << outcome;
    // Two kernels of one name would share their attributes: a cubin that has them is corrupt.
    const std::string outcome_short = read_within(one_name_for_everything(8, 3, 2), 64);
    EXPECT_EQ(outcome_short, "refused: cubin: two kernel symbols are named 'AAAAAAAA'");
}

TEST(CubinInfo, AMalformedCubinIsBadInput)
{
    std::string header = one_name_for_everything(8, 25, 0).substr(0, 100); // 25 headers cut away
    try {
        (void)read_cubin_info(header);
        FAIL() << "a cubin cut short must be refused";
    } catch (const CubinError& error) {
        EXPECT_EQ(error.kind(), ErrorKind::bad_input) << error.what();
        EXPECT_NE(std::string(error.what()).find("25 section headers cannot fit in 100 bytes"), std::string::npos)
            << error.what();
    }
}

} // namespace
} // namespace cubin_info_test
} // namespace harness::compile
