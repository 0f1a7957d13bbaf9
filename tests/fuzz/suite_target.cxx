// The suite loader: parse_suite, then what the run does with a loaded suite before any GPU work
// (expand the sweep, evaluate every expression of every case).

#include "rules.hxx"
#include "targets.hxx"
#include "tests/unit/test_paths.hxx"

#include "harness/compile/occupancy.hxx"
#include "harness/core/error.hxx"
#include "harness/suite/suite.hxx"
#include "harness/suite/sweep.hxx"

#include <cmath>
#include <fmt/format.h>
#include <set>
#include <yaml-cpp/yaml.h>

namespace harness::fuzz {

namespace fs = std::filesystem;
using suite::Bindings;
using suite::Expression;

namespace {

/// Suites are parsed as if they lived in suites/, so that `../kernels/...` resolves.
const fs::path& suite_file()
{
    static const fs::path file = repo_root() / "suites" / "fuzz-input.yaml";
    return file;
}

/// The value of an expression at a point; nullopt where evaluation fails with its documented
/// error (overflow, division by zero), which the runner reports as a failed case.
std::optional<std::int64_t> value_at(const Expression& e, const Bindings& point)
{
    try {
        return e.evaluate(point);
    } catch (const suite::ExpressionError&) {
        return std::nullopt;
    }
}

/// Kernel sources and include folders stay inside the repository that holds the suite.
void require_paths_inside(const suite::Suite& s)
{
    const fs::path root = fs::weakly_canonical(suite_file().parent_path() / "..");
    const auto inside = [&](const fs::path& p) {
        const fs::path relative = fs::weakly_canonical(p).lexically_relative(root);
        return !relative.empty() && *relative.begin() != "..";
    };
    for (const auto& v : s.variants) {
        std::vector<fs::path> read; // the files the variant's kind reads
        switch (v.kind) {
        case suite::VariantKind::source: read = {v.source}; break;
        case suite::VariantKind::module:
            if (v.module_folder.empty()) read = {v.module}; // under ${NAME_DIR}: in the build folder
            break;
        case suite::VariantKind::triton:
        case suite::VariantKind::cutile: read = {v.manifest, v.module, v.exported_from}; break;
        case suite::VariantKind::builtin: break;
        }
        for (const auto& file : read)
            require(inside(file), "paths-inside-repository",
                    fmt::format("variant '{}' reads '{}', outside the repository", v.name, file.string()));
    }
    for (const auto& dir : s.include_dirs)
        require(inside(dir), "paths-inside-repository",
                fmt::format("include folder '{}' is outside the repository", dir.string()));
}

/// NVRTC options that read or write files outside the kernel's include folders.
bool touches_files(std::string_view option)
{
    static constexpr std::string_view prefixes[] = {"--time",
                                                    "-time",
                                                    "--fdevice-time-trace",
                                                    "-fdevice-time-trace",
                                                    "--create-pch",
                                                    "-create-pch",
                                                    "--pch-dir",
                                                    "-pch-dir",
                                                    "--use-pch",
                                                    "-use-pch",
                                                    "--pch",
                                                    "-pch",
                                                    "--pre-include",
                                                    "-include",
                                                    "--include-path",
                                                    "-I"};
    for (const auto prefix : prefixes)
        if (option.starts_with(prefix)) return true;
    return false;
}

/// What reaches NVRTC: entry names, defines and options.
void require_compiler_inputs(const suite::Suite& s)
{
    for (const auto& v : s.variants) {
        for (const auto& l : v.launches)
            require(
                is_printable_ascii(l.entry), "entry-printable",
                fmt::format("variant '{}' has the entry '{}', which is not printable ASCII", v.name, excerpt(l.entry)));
        for (const auto& [name, value] : v.defines)
            require(!has_control_character(name) && !has_control_character(value), "defines-printable",
                    fmt::format("variant '{}' defines '{}' as '{}'", v.name, excerpt(name), excerpt(value)));
        for (const auto& option : v.options) {
            require(!has_control_character(option), "options-printable",
                    fmt::format("variant '{}' has the option '{}'", v.name, excerpt(option)));
            require(!touches_files(option), "options-touch-no-files",
                    fmt::format("variant '{}' has the NVRTC option '{}', which reads or writes files", v.name,
                                excerpt(option)));
        }
    }
}

/// Floating-point settings are finite numbers, and integers are kept as written.
void require_numbers(const suite::Suite& s, const YAML::Node& document)
{
    const auto finite = [](const char* what, double value) {
        require(std::isfinite(value), "numbers-finite", fmt::format("accepted {} = {}", what, value));
    };
    const auto tolerance = [&](const suite::Tolerance& t) {
        finite("tolerance.rel", t.rel);
        finite("tolerance.abs", t.abs);
    };
    tolerance(s.tolerance);
    finite("timing.max_noise", s.timing.max_noise);
    finite("timing.budget_s", s.timing.budget_s);
    finite("timing.timeout_s", s.timing.timeout_s);
    const auto buffers = [&](const std::vector<suite::BufferSpec>& list) {
        for (const auto& b : list) {
            finite("a buffer's min", b.min);
            finite("a buffer's max", b.max);
            if (b.tolerance) tolerance(*b.tolerance);
        }
    };
    buffers(s.buffers);
    for (const auto& v : s.variants) {
        buffers(v.buffers);
        for (const auto& l : v.launches)
            for (const auto& a : l.args)
                if (a.literal) finite("a scalar argument", *a.literal);
    }
    // min_samples is read as a 64-bit integer and kept in an int.
    try {
        const YAML::Node written = document["timing"]["min_samples"];
        if (written && written.IsScalar()) {
            std::size_t used = 0;
            const long long value = std::stoll(written.Scalar(), &used, 0);
            if (used == written.Scalar().size())
                require(value == s.timing.min_samples, "integers-exact",
                        fmt::format("timing.min_samples {} was kept as {}", value, s.timing.min_samples));
        }
    } catch (const std::logic_error&) { // not an integer, or the document is not a map of maps
    } catch (const YAML::Exception&) {
    }
}

/// FP8 data only in suites whose every architecture has FP8 (sm_89 on), round_to only to a type
/// the buffer holds exactly, narrow float literals within their finite range.
void require_element_types(const suite::Suite& s)
{
    const auto check_type = [&](suite::ElementType type, const std::string& what) {
        const int needed = suite::element_type_info(type).min_sm_version;
        for (const auto& arch : s.archs)
            if (const auto* limits = compile::find_arch_limits(arch))
                require(limits->sm_version >= needed, "types-on-archs",
                        fmt::format("accepted {} of type {} with the architecture {}", what,
                                    suite::element_type_name(type), excerpt(arch)));
    };
    const auto buffers = [&](const std::vector<suite::BufferSpec>& list) {
        for (const auto& b : list) {
            check_type(b.type, fmt::format("buffer '{}'", b.name));
            if (b.round_to)
                require(suite::holds_exactly(b.type, *b.round_to), "round-to-held",
                        fmt::format("accepted buffer '{}' of type {} with round_to {}", b.name,
                                    suite::element_type_name(b.type), suite::element_type_name(*b.round_to)));
        }
    };
    buffers(s.buffers);
    for (const auto& v : s.variants) {
        buffers(v.buffers);
        for (const auto& l : v.launches)
            for (const auto& a : l.args) {
                if (a.is_buffer()) continue;
                check_type(a.scalar_type, "a scalar");
                if (a.literal && a.scalar_type != suite::ElementType::f32 && a.scalar_type != suite::ElementType::f64)
                    require(std::fabs(*a.literal) <= suite::max_value(a.scalar_type), "numbers-finite",
                            fmt::format("accepted the {} scalar {}, beyond the type's largest finite value",
                                        suite::element_type_name(a.scalar_type), *a.literal));
            }
    }
}

/// Launch geometry that no GPU can launch, and negative buffer sizes, at one case.
void require_launchable(const suite::VariantSpec& v, const std::vector<suite::BufferSpec>& buffers,
                        const suite::Case& c)
{
    // Messages are formatted only for a broken rule: this runs for every case.
    const auto broken = [&](const char* rule, const std::string& what) {
        throw RuleBroken(rule, fmt::format("variant '{}' at {}: {}", v.name, c.params_text, what));
    };
    for (const auto& l : v.launches) {
        std::int64_t threads = 1;
        for (const auto& dim : l.block)
            if (const auto d = value_at(dim, c.params)) {
                if (*d < 1 || *d > 1024) broken("launch-geometry", fmt::format("a block dimension is {}", *d));
                threads *= *d;
            }
        if (threads > 1024) broken("launch-geometry", fmt::format("a block of {} threads", threads));
        for (const auto& dim : l.grid)
            if (const auto d = value_at(dim, c.params); d && *d < 1)
                broken("launch-geometry", fmt::format("a grid dimension is {}", *d));
        if (const auto bytes = value_at(l.shared_bytes, c.params); bytes && *bytes < 0)
            broken("launch-geometry", fmt::format("shared_bytes is {}", *bytes));
        for (const auto& a : l.args)
            if (!a.is_buffer()) (void)value_at(a.scalar, c.params);
    }
    for (const auto& b : buffers) {
        const auto count = value_at(b.count, c.params);
        if (count && *count < 0) broken("buffer-count", fmt::format("buffer '{}' has {} elements", b.name, *count));
        if (b.index && count && *count > 0) {
            Bindings with_i = c.params;
            for (const std::int64_t i : {std::int64_t{0}, *count - 1}) {
                with_i["i"] = i;
                (void)value_at(*b.index, with_i);
            }
        }
    }
    if (v.flops) (void)value_at(*v.flops, c.params);
    if (v.bytes) (void)value_at(*v.bytes, c.params);
}

/// With values of a variant's own (`params:` under it): each variant's cases are the points of its
/// own product, each once; the reference has one case at every point; at most 10000 cases.
void require_variant_points(const suite::Suite& s, const std::vector<suite::Case>& cases)
{
    constexpr std::size_t max_cases = 10000;
    require(cases.size() <= max_cases, "case-count", fmt::format("accepted {} cases", cases.size()));
    std::vector<std::size_t> per_variant(s.variants.size(), 0);
    std::vector<std::set<std::size_t>> points(s.variants.size());
    for (const auto& c : cases) {
        const auto& v = s.variants.at(c.variant);
        ++per_variant[c.variant];
        require(points[c.variant].insert(c.point).second, "variant-points",
                fmt::format("variant '{}' has two cases at {}", v.name, excerpt(c.params_text)));
        require(suite::runs_at(s, v, c.params), "variant-points",
                fmt::format("variant '{}' has a case at {}, outside its values", v.name, excerpt(c.params_text)));
    }
    const std::size_t point_count = suite::sweep_points(s).size();
    for (std::size_t v = 0; v < s.variants.size(); ++v) {
        const bool reference = s.variants[v].name == s.reference;
        const std::size_t expected = reference ? point_count : suite::product_size(s, s.variants[v], max_cases);
        require(per_variant[v] == expected, "variant-points",
                fmt::format("variant '{}' has {} cases, its values {} points", s.variants[v].name, per_variant[v],
                            expected));
    }
}

/// Expands the sweep and checks every case; past 20000 cases, an even sample of them, so that a
/// sweep the loader allows does not read as a hang. A sweep may have as many points as one
/// parameter may have values (10000): a product past that is expanded by every run and report.
void require_cases(const suite::Suite& s)
{
    constexpr std::size_t max_points = 10000;
    std::size_t points = 1;
    for (const auto& p : s.params) {
        require(p.values.size() <= max_points / points, "sweep-size",
                fmt::format("accepted a sweep of more than {} points (parameter '{}' has {} values)", max_points,
                            p.name, p.values.size()));
        points *= p.values.size();
    }
    const auto cases = suite::expand_cases(s);
    require_variant_points(s, cases);
    std::vector<std::vector<suite::BufferSpec>> buffers;
    for (const auto& v : s.variants) buffers.push_back(s.buffers_of(v));
    const std::size_t stride = cases.size() / 20000 + 1;
    for (std::size_t i = 0; i < cases.size(); i += stride) {
        const auto& c = cases[i];
        require_launchable(s.variants.at(c.variant), buffers.at(c.variant), c);
    }
}

} // namespace

Reception run_suite(const std::string& input, const InputContext&)
{
    suite::Suite s;
    try {
        s = suite::parse_suite(input, suite_file());
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::bad_input) throw;
        return {false, e.what()};
    }
    const YAML::Node document = YAML::Load(input);
    require_yaml_text(input, document);
    require(is_folder_name(s.name), "suite-name-is-a-folder-name",
            fmt::format("accepted the suite name '{}', which cannot be a folder of baselines/ or reports/",
                        excerpt(s.name)));
    for (const auto& arch : s.archs)
        require(compile::find_arch_limits(arch) != nullptr, "archs-known",
                fmt::format("accepted the architecture '{}', which the occupancy table does not know", excerpt(arch)));
    require_paths_inside(s);
    require_compiler_inputs(s);
    require_numbers(s, document);
    require_element_types(s);
    require_cases(s);
    return {true, ""};
}

std::span<const std::string_view> suite_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        "suite: "sv, "description: "sv, "include: "sv, "archs: "sv, "params:\n"sv, "reference: "sv,
        "tolerance: "sv, "timing:\n"sv, "buffers:\n"sv, "flops: "sv, "bytes: "sv, "variants:\n"sv,
        "compare: "sv, "expect: "sv, "metrics: "sv, "source: "sv, "entry: "sv, "block: "sv, "grid: "sv,
        "shared_bytes: "sv, "args: "sv, "launches:\n"sv, "defines: "sv, "options: "sv, "builtin: "sv,
        "type: "sv, "count: "sv, "init: "sv, "seed: "sv, "min: "sv, "max: "sv, "index: "sv, "role: "sv,
        "rel: "sv, "abs: "sv, "min_samples: "sv, "max_noise: "sv, "budget_s: "sv, "timeout_s: "sv, "from: "sv,
        "to: "sv, "step: "sv, "mul: "sv, "{from: 1, to: 100000000000}"sv,
        "{from: 9223372036854775800, to: 9223372036854775807}"sv, "{from: 1, to: 1000}"sv,
        "{from: 1, to: 9223372036854775807, mul: 2}"sv, "[0]"sv, "[2048]"sv, "[1024, 2]"sv,
        "[65536, 65536, 65536]"sv, "f32"sv, "f64"sv, "i32"sv, "u64"sv, "f16"sv, "bf16"sv, "fp8_e4m3"sv,
        "fp8_e5m2"sv, "i8"sv, "u8"sv, "i16"sv, "u16"sv, "round_to: "sv, "{f16: 1.5}"sv, "{bf16: 70000.0}"sv,
        "{f16: N*N}"sv, "{i8: 200}"sv, "{u16: -1}"sv, "{fp8_e4m3: 0.5}"sv, "sm_89"sv, "sm_86"sv, "zeros"sv,
        "uniform"sv, "sequence"sv,
        "in"sv, "out"sv, "inout"sv, "temp"sv, "sm_90"sv, "sm_10"sv, "sm_90a"sv, "sm_1000"sv, "cublas_sgemm"sv,
        "ceil_div(N, 16)"sv, "min(N, 4096)"sv, "max("sv, "N*N*N*N*N"sv, "(i % 3) * N + i / 3"sv, "{i32: N}"sv,
        "{u64: -1}"sv, "{f32: 1.5e40}"sv, "{f64: nan}"sv, "--time=/tmp/x"sv, "--fdevice-time-trace=/tmp/y"sv,
        "-maxrregcount=64"sv, "--use_fast_math"sv, "-DX=1"sv, "gemm_naive"sv, "gemm_smem_tiled<32>"sv,
        "\"rel 5%\""sv, "\"samples 5%\""sv, "\"<= 64\""sv, "registers"sv, "time_median"sv,
        "theoretical_occupancy"sv, "../kernels/gemm/gemm_naive.cu"sv, "../kernels"sv,
        "../../../../etc/passwd"sv, "/etc"sv, "gemm_naive\n#include \"/etc/passwd\""sv,
        "    params: {N: [1, 2, 3]}\n"sv, "    params: {BS: {from: 1, to: 10000}}\n"sv, "params: {N: {from: 2, to: 200}}, "sv,
        "{P1: [1], P2: [1], P3: [1]}"sv,
    };
    // clang-format on
    return tokens;
}

} // namespace harness::fuzz
