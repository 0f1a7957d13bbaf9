#pragma once
// The in-memory form of a suite file (docs/suite-format.md), validated and ready to expand.

#include "harness/core/rule_syntax.hxx"
#include "harness/suite/element_type.hxx"
#include "harness/suite/expression.hxx"

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::suite {

// A suite's `compare:` and `expect:` entries are written in the rule syntax, under these names here.
using harness::expect_holds;
using harness::ExpectOp;
using harness::ExpectRule;
using harness::parse_expect;
using harness::parse_rule;
using harness::Rule;
using harness::RuleKind;

/// How a buffer is filled before a run.
enum class InitKind { zeros, ones, sequence, uniform };

/// What a kernel does with a buffer; decides verification and restoring between runs.
enum class BufferRole { in, out, inout, temp };

/// Relative and absolute tolerance for output verification: |x - ref| <= abs + rel * |ref|.
struct Tolerance {
    double rel = 1e-5;
    double abs = 1e-6;
};

/// Where something was written in the suite file, for messages.
struct SourceLocation {
    int line = 0;
    int column = 0;
};

/// A `compare:` entry: the baseline rule for one metric, overriding the metric table's default.
struct CompareSpec {
    std::string metric;
    Rule rule;
    SourceLocation where;
};

/// Which cliff maps an `expect:` rule on cliffs judges (docs/cliffs.md): every map, or only the
/// maps of one kind. A GPU run draws maps of measured figures (time, noisy); the static tier maps
/// exact ones (theoretical occupancy), which are flat where only a GPU shows the cliff (waves,
/// tiles, alignment).
enum class CliffMaps {
    all,      ///< `cliff_count: "== 0"`
    measured, ///< `cliff_count: {measured: ">= 4"}`
    exact,    ///< `cliff_count: {exact: "== 0"}`
};

/// An `expect:` entry: a condition on one metric that must hold with or without a baseline.
struct ExpectSpec {
    std::string metric;
    ExpectRule rule;
    SourceLocation where;
    CliffMaps maps = CliffMaps::all; ///< for a cliff expectation, the maps it judges; `all` for any other

    /// Whether it judges a cliff map of exact figures (`exact`) or of measured ones (not `exact`).
    bool judges_map(bool exact) const { return maps == CliffMaps::all || (maps == CliffMaps::exact) == exact; }
};

/// "measured", "exact"; "" for every map (the suite's key for each).
const char* cliff_maps_name(CliffMaps maps);

/// One swept parameter with its values in order.
struct ParamSpec {
    std::string name;
    std::vector<std::int64_t> values;
    /// `{scan: [first, last]}`: a dense axis along which cliffs are found (docs/cliffs.md); its
    /// values expand like any other parameter's.
    bool scanned = false;
    /// A scan's `pitch:`: a row pitch or offset in bytes at each point, for the alignment cause.
    std::optional<Expression> pitch{};
};

/// A device buffer the kernels read or write.
struct BufferSpec {
    std::string name;
    ElementType type = ElementType::f32;
    Expression count;
    InitKind init = InitKind::zeros;
    std::uint64_t seed = 0;
    double min = 0.0;
    double max = 1.0;
    /// `min:` or `max:` written as an expression of the sweep parameters (`V - 1`): the bound at a
    /// case's point is its value there, in place of the number above.
    std::optional<Expression> min_expression;
    std::optional<Expression> max_expression;
    std::optional<Expression> index; ///< maps element i to the generator index (same values, other layout)
    /// Holds the values a buffer of this type would hold (e.g. an f32 reference fed a bf16 variant's inputs).
    std::optional<ElementType> round_to;
    BufferRole role = BufferRole::in;
    std::optional<Tolerance> tolerance;
    SourceLocation where;
};

/// The tolerance that verifies `output` (a buffer as the variant sees it) against the reference's
/// buffer of the same name, of type `reference_type`: the buffer's own `tolerance:`; else exact
/// when both types are integers; else `suite_tolerance` loosened, field by field, to the floor of
/// the less precise type (docs/suite-format.md has the table).
Tolerance verification_tolerance(const BufferSpec& output, ElementType reference_type,
                                 const Tolerance& suite_tolerance);

/// One kernel argument: a buffer by name, or a scalar.
struct ArgSpec {
    std::string buffer; ///< non-empty for a buffer argument
    ElementType scalar_type = ElementType::i32;
    Expression scalar;             ///< integer scalar value
    std::optional<double> literal; ///< a floating-point literal for a floating scalar type
    SourceLocation where;
    bool is_buffer() const { return !buffer.empty(); }
};

/// One kernel launch of a variant.
struct LaunchSpec {
    std::string entry;             ///< name expression, e.g. gemm_smem_tiled<32>
    std::vector<Expression> grid;  ///< 1 to 3 dimensions
    std::vector<Expression> block; ///< 1 to 3 dimensions
    Expression shared_bytes;       ///< dynamic shared memory
    /// Thread block cluster dimensions, blocks per cluster along x, y, z ({1, 1, 1}: no cluster);
    /// `grid` counts blocks and is a multiple of them. Set for Triton kernels exported with
    /// num_ctas > 1, which must be launched as clusters.
    std::array<int, 3> cluster{1, 1, 1};
    std::vector<ArgSpec> args;
    SourceLocation where;
    SourceLocation block_where; ///< of `block:`; where the launch is for a launch that writes none (Triton)
};

/// What a variant runs, set by the loader from the key that names it; each kind is loaded in its
/// own file (suite/load_<kind>.cxx), and every stage that treats kinds differently switches on it
/// (docs/architecture.md, "A variant kind").
enum class VariantKind {
    source,  ///< `source:` a .cu file compiled by NVRTC
    module,  ///< `module:` a cubin, fatbin or PTX file built by the project's own compiler
    triton,  ///< `triton:` the manifest of a kernel exported from Triton, and its cubin
    cutile,  ///< `cutile:` the manifest of a kernel exported from cuTile, its cubin and PTX
    builtin, ///< `builtin:` a library routine called instead of a kernel
};

/// The suite key that makes a variant of `kind` ("source", "module", "triton", "cutile", "builtin").
const char* variant_kind_key(VariantKind kind);

/// Whether a variant of `kind` launches kernels of a module, compiled by NVRTC or read from a file:
/// every kind but a library call. Only such a variant has compile units, cubins (and so static
/// figures and SASS), kernel resources and cached counters.
bool runs_module_kernels(VariantKind kind);

/// Whether the line table of a variant of `kind` names its files as its builder had them: a module
/// built by nvcc as nvcc was given them (often absolute), an export as the exporting machine had
/// them. NVRTC's (a `source:` variant) names the kernel file as the harness gave it, in the
/// compiler's own folder, and includes by their include path.
bool names_files_as_built(VariantKind kind);

/// A kernel variant: one source file, compiled once, launched as one or more kernels.
struct VariantSpec {
    std::string name;
    VariantKind kind = VariantKind::source;
    std::string builtin;          ///< a library routine (builtin_signatures.hxx) instead of a kernel
    std::filesystem::path source; ///< absolute path; empty for a built-in or a module
    /// A cubin, fatbin or PTX file built by the project's own compiler, instead of `source`
    /// (absolute; it need not exist until the project is built).
    std::filesystem::path module;
    /// `module` as the suite writes it ("${BUILD_DIR}/x.fatbin"): what messages show, so that the
    /// value of a variable is never printed.
    std::string module_written;
    /// The folder a leading `${NAME_DIR}` named, which `module` stays inside; empty without one.
    std::filesystem::path module_folder;
    /// The manifest of an exported kernel (`triton:`, triton_manifest.hxx; `cutile:`,
    /// cutile_manifest.hxx), absolute; the variant is then its cubin (`module`), launched as the
    /// manifest says. Empty for the other kinds.
    std::filesystem::path manifest;
    /// The `.py` file an exported kernel was exported from (absolute): what reports name as its file.
    std::filesystem::path exported_from;
    std::vector<std::filesystem::path> built_from; ///< sources the module must not be older than
    bool allow_stale = false;                      ///< `stale: allow`: a module older than its sources is used as it is
    std::map<std::string, std::string> defines;    ///< values may name sweep parameters (compile_params.hxx)
    std::vector<std::string> options;
    std::vector<LaunchSpec> launches;
    /// Sweep parameters that entries' template arguments or defines' values name, in the suite's
    /// order: each distinct combination of their values is compiled once.
    std::vector<std::string> compile_params;
    std::vector<BufferSpec> buffers; ///< variant-level buffers (added to the suite's)
    std::optional<Expression> flops;
    std::optional<Expression> bytes;
    std::vector<CompareSpec> compare; ///< per-variant rules, over the suite's
    std::vector<ExpectSpec> expect;   ///< per-variant expectations, over the suite's for the same metric
    /// `params:`: the variant's own values for some of the suite's parameters, in place of the
    /// suite's for this variant's cases only (each version of a kernel its own block sizes).
    std::vector<ParamSpec> params;
    SourceLocation where;
};

/// Whether any launch of `variant` passes `buffer` (so its cases allocate it).
bool uses_buffer(const VariantSpec& variant, const std::string& buffer);

/// `cliffs:`: what counts as a cliff along the suite's scanned axis, and how one is gated.
struct CliffSpec {
    /// A step shallower than this (|level after / level before - 1|) is no cliff: it is not
    /// listed, and a new one this shallow does not fail.
    double min_depth = 0.05;
    /// A measured (noisy) cliff counts as deeper or shallower than the baseline's only when its
    /// depth moved by more than this share of the baseline's depth (0.25: a +20 % cliff must pass
    /// +25 %), and by more than three of its noises: a cliff's depth moves more between processes,
    /// and with where the step finder places the edge of a wide rise, than its points' noise in one.
    double depth_tolerance = 0.25;
};

/// `expect:` names that judge the cliffs along the scanned axis instead of a figure of each case:
/// every cliff's depth, and how many cliffs each map has (docs/cliffs.md).
inline constexpr const char* cliff_depth_expectation = "cliff_depth";
inline constexpr const char* cliff_count_expectation = "cliff_count";
/// Whether `name` is one of the cliff expectations above.
bool is_cliff_expectation(std::string_view name);

/// When a cold run of a variant empties the L2 (unless --hot): before each of its launches, so that
/// each launch's time and counters are its own and independent of the launch before it, as under
/// Nsight Compute's cache control (the default); or once before its first launch, so that a
/// launch finds what the one before it left in the L2, as an application calling the variant does.
enum class L2Flush { each_launch, each_variant };

/// Timing policy of a suite.
struct TimingSpec {
    int min_samples = 10;
    /// Enough for a noisy case: a baseline keeps at most 64 samples, and more of this run's add
    /// little to the comparison with it.
    int max_samples = 64;
    double max_noise = 0.005;
    double budget_s = 1.0;
    double timeout_s = 30.0;
    L2Flush l2_flush = L2Flush::each_launch; ///< `timing.l2_flush`: launch (default) or variant
};
inline constexpr double max_budget_s = 3600.0;   ///< the longest timing budget per case
inline constexpr double max_timeout_s = 86400.0; ///< the longest a case may run before it counts as hung

/// What one compilation (one variant at one compile configuration, for one architecture) may take
/// before it is stopped and fails its cases: wall-clock seconds, and MiB of data memory.
struct CompileLimits {
    double timeout_s = 300.0;
    std::int64_t memory_mib = 8192;
};

/// Limits that keep a suite file from exhausting the machine; an input past one is refused at load.
inline constexpr std::size_t max_suite_file_bytes = 1024 * 1024;
inline constexpr std::size_t max_param_values = 10000; ///< values of one parameter (a list, a range, a scan)
inline constexpr std::size_t max_cases = 10000;        ///< sweep points x variants
inline constexpr std::size_t max_entry_length = 512;

/// How a suite may reach outside the project that holds it.
struct LoadOptions {
    /// Sources and include folders may lie outside the project (`--sources-anywhere`).
    bool sources_anywhere = false;
    /// The folder a relative `${NAME_DIR}` of a `module:` path is taken from, as a shell would take
    /// it from its working folder; empty: the working folder. A bisect step gives the folder of its
    /// worktree that stands where the working folder stands in the checkout.
    std::filesystem::path working_folder;
};

/// A loaded, validated suite.
struct Suite {
    std::filesystem::path file;         ///< as given on the command line
    std::filesystem::path project_root; ///< absolute; see project_root() in core/input_files.hxx
    std::string name;
    std::string description;
    std::vector<std::filesystem::path> include_dirs; ///< absolute
    std::vector<std::string> archs;
    std::vector<std::string> metrics; ///< metric-table names to collect; empty: the table's default set
    std::vector<ParamSpec> params;
    std::string reference;
    Tolerance tolerance;
    TimingSpec timing;
    CompileLimits compile_limits; ///< `compile:`
    std::vector<BufferSpec> buffers;
    std::vector<VariantSpec> variants;
    std::vector<CompareSpec> compare; ///< suite-wide rules, over the metric table's defaults
    std::vector<ExpectSpec> expect;   ///< suite-wide expectations
    CliffSpec cliffs;                 ///< `cliffs:`

    const VariantSpec* find_variant(const std::string& name) const;
    /// The suite's buffers plus the variant's own.
    std::vector<BufferSpec> buffers_of(const VariantSpec& variant) const;
    /// The rule for `metric` in `variant`: the variant's, else the suite's, else the metric table's.
    Rule rule_for(const VariantSpec& variant, const std::string& metric) const;
    /// The expectations that apply to `variant`: the suite's, replaced metric by metric by the
    /// variant's (a variant's rule on cliff_count replaces the suite's on every kind of map).
    std::vector<ExpectSpec> expectations_for(const VariantSpec& variant) const;
    /// The scanned parameter (`{scan: ...}`), or nullptr: a suite scans at most one.
    const ParamSpec* scanned_param() const;
};

/// Loads and validates a suite file; throws InputError naming file, line, column and field.
Suite load_suite(const std::filesystem::path& file, const LoadOptions& options = {});

/// Same, from text (for tests); `file` is only used in messages, to resolve relative paths and
/// to find the project.
Suite parse_suite(const std::string& text, const std::filesystem::path& file, const LoadOptions& options = {});

/// Why an NVRTC option may not appear in a suite (it writes files, changes the include search,
/// or is not an option NVRTC takes), or "" when it may.
std::string nvrtc_option_problem(const std::string& option);

} // namespace harness::suite
