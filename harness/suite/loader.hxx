#pragma once
// The suite loader's walk of the YAML tree (load_suite.cxx has the entry points). Internal to suite/:
// reading and checking single fields (load_values.cxx), buffers, variants and launches
// (load_variants.cxx), each kind of variant in its own file (load_source.cxx, load_module.cxx,
// load_triton.cxx, load_cutile.cxx, load_builtin.cxx), the suite as a whole (load_suite.cxx).

#include "harness/suite/suite.hxx"

#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace harness::suite {

namespace fs = std::filesystem;

struct TritonManifest;
struct CutileManifest;
struct CutileParameter;

/// Walks the YAML tree, keeping the file name so that every error can say where it is.
class Loader {
public:
    Loader(fs::path file, LoadOptions options);
    [[noreturn]] void fail(const YAML::Node& node, const std::string& field, const std::string& message) const;
    /// A map whose keys are single values, each given once (YAML would keep only the first).
    void expect_map(const YAML::Node& node, const std::string& field) const;
    void check_keys(const YAML::Node& node, const std::string& field, const std::vector<std::string>& allowed,
                    const std::vector<std::string>& required = {}) const;
    static std::string prefixed(const std::string& field, const std::string& key);
    std::string scalar(const YAML::Node& node, const std::string& field) const;
    double number(const YAML::Node& node, const std::string& field) const;
    std::int64_t integer(const YAML::Node& node, const std::string& field) const;
    std::int64_t integer_in(const YAML::Node& node, const std::string& field, std::int64_t low,
                            std::int64_t high) const;
    double number_in(const YAML::Node& node, const std::string& field, double low, double high) const;
    /// Parses an expression and checks that it reads only `names`.
    Expression expression(const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& names) const;
    /// Same, for `text` that starts where `node` starts.
    Expression expression_text(const YAML::Node& node, const std::string& text, const std::string& field,
                               const std::set<std::string, std::less<>>& names) const;
    std::vector<Expression> dims(const YAML::Node& node, const std::string& field,
                                 const std::set<std::string, std::less<>>& names) const;
    /// A metric name from the metric table, or an error with a suggestion.
    std::string metric_name(const YAML::Node& key, const std::string& field) const;
    /// `compare: {metric: "rel 5%", ...}`
    std::vector<CompareSpec> compare_rules(const YAML::Node& node, const std::string& field) const;
    /// `expect: {metric: "<= 64", cliff_count: {measured: ">= 4", exact: "== 0"}, ...}`
    std::vector<ExpectSpec> expectations(const YAML::Node& node, const std::string& field) const;
    /// One `expect:` condition, "<= 64".
    ExpectRule condition(const YAML::Node& node, const std::string& field) const;
    std::vector<std::string> string_list(const YAML::Node& node, const std::string& field) const;
    SourceLocation where(const YAML::Node& node) const;
    Tolerance tolerance(const YAML::Node& node, const std::string& field, Tolerance base) const;
    double non_negative(const YAML::Node& node, const std::string& field) const;
    ParamSpec param(const std::string& name, const YAML::Node& node, const std::string& field) const;
    /// A scanned parameter's values (`{scan: [first, last], step: k}`); its pitch comes later.
    void scan(ParamSpec& p, const YAML::Node& node, const std::string& field) const;
    /// The scan's `pitch:` and the suite's `cliffs:`, once the sweep is known.
    void cliff_settings(Suite& s, const YAML::Node& root);
    BufferSpec buffer(const std::string& name, const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params) const;
    std::vector<BufferSpec> buffers(const YAML::Node& node, const std::string& field,
                                    const std::set<std::string, std::less<>>& params) const;
    ArgSpec arg(const YAML::Node& node, const std::string& field, const std::set<std::string, std::less<>>& params,
                const std::vector<BufferSpec>& known_buffers) const;
    LaunchSpec launch(const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params,
                      const std::vector<BufferSpec>& known_buffers) const;
    VariantSpec variant(const std::string& name, const YAML::Node& node, const std::string& field,
                        const std::set<std::string, std::less<>>& params,
                        const std::vector<BufferSpec>& suite_buffers) const;
    /// One variant, of the kind its keys make it, read by that kind's loader (load_<kind>.cxx).
    /// A variant whose kernels come from a `.cu` file that NVRTC compiles (load_source.cxx).
    VariantSpec source_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                               const std::set<std::string, std::less<>>& params,
                               const std::vector<BufferSpec>& suite_buffers) const;
    /// A variant whose kernels come from a module file (cubin, fatbin or PTX) built by the project's
    /// own compiler. `${VAR}` in the path is taken from the environment; a path that comes from a
    /// variable (a build folder) may lie anywhere, one written in the suite stays in the project
    /// (load_module.cxx).
    VariantSpec module_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                               const std::set<std::string, std::less<>>& params,
                               const std::vector<BufferSpec>& suite_buffers) const;
    /// The keys a `source:` or `module:` variant may have.
    static const std::vector<std::string>& kernel_variant_keys();
    /// The rest of a `source:` or `module:` variant: its buffers, its launches as the suite writes
    /// them, the sweep parameters they compile with, its work figures and its gating.
    VariantSpec kernel_launches(VariantSpec v, const YAML::Node& node, const std::string& field,
                                const std::set<std::string, std::less<>>& params,
                                const std::vector<BufferSpec>& suite_buffers) const;
    /// A variant that launches a kernel exported from Triton (`triton:` names its manifest): the
    /// entry, block, dynamic shared memory and hidden parameters come from the manifest, the
    /// user's arguments are checked against its parameters (load_triton.cxx).
    VariantSpec triton_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                               const std::set<std::string, std::less<>>& params,
                               const std::vector<BufferSpec>& suite_buffers) const;
    /// A Triton variant's arguments: the user's, checked against the manifest's parameters (a
    /// scalar takes the parameter's type), then Triton's hidden ones.
    void triton_arguments(VariantSpec& v, LaunchSpec& l, const TritonManifest& m, const YAML::Node& node,
                          const std::string& field, const std::set<std::string, std::less<>>& params,
                          const std::vector<BufferSpec>& known) const;
    /// A variant that launches a kernel exported from cuTile (`cutile:` names its manifest): the
    /// entry and block come from the manifest, each array argument is checked at every point
    /// against what the export assumed and passed as pointer, shape and strides (load_cutile.cxx).
    VariantSpec cutile_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                               const std::set<std::string, std::less<>>& params,
                               const std::vector<BufferSpec>& suite_buffers) const;
    /// A cuTile variant's arguments against the manifest's parameters: arrays and scalars, and no
    /// two arrays on one buffer unless they share an alias group.
    void cutile_arguments(LaunchSpec& l, const CutileManifest& m, const YAML::Node& node, const std::string& field,
                          const std::set<std::string, std::less<>>& params, const std::vector<BufferSpec>& known) const;
    /// One array argument (`{array: BUFFER, shape: [...], strides: [...]}`) checked at every point
    /// and appended to the launch as cuTile's calling convention passes it; returns its buffer.
    std::string cutile_array(LaunchSpec& l, const CutileParameter& p, const YAML::Node& node, const std::string& f,
                             const std::set<std::string, std::less<>>& params,
                             const std::vector<BufferSpec>& known) const;
    /// A list of exactly `ndim` expressions of the sweep.
    std::vector<Expression> dims_of(const YAML::Node& node, const std::string& field, int ndim,
                                    const std::set<std::string, std::less<>>& params) const;
    /// An array's shape and strides at one point against the export's assumptions, and its reach
    /// within its buffer.
    void check_array_at(const YAML::Node& node, const std::string& f, const CutileParameter& p,
                        const BufferSpec& buffer, const std::vector<Expression>& shape,
                        const std::vector<Expression>& strides, std::size_t point) const;
    /// The sweep parameters that reach the compiler through the variant's entries and defines, in
    /// the suite's order.
    std::vector<std::string> compile_params_of(const VariantSpec& v,
                                               const std::set<std::string, std::less<>>& params) const;
    /// A variant's own `flops:` and `bytes:`, computable at every sweep point.
    void work_figures(VariantSpec& v, const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params) const;
    /// A variant's `compare:` and `expect:`.
    void gating(VariantSpec& v, const YAML::Node& node, const std::string& field) const;
    /// A variant that calls a library routine (builtin_signatures.hxx) instead of a kernel
    /// (load_builtin.cxx).
    VariantSpec builtin_variant(VariantSpec v, const YAML::Node& node, const std::string& field,
                                const std::set<std::string, std::less<>>& params,
                                const std::vector<BufferSpec>& suite_buffers) const;
    Suite suite(const YAML::Node& root);
    /// The suite's `include:` folders, or the project's kernels/ folder.
    void include_folders(Suite& s, const YAML::Node& root) const;
    /// `archs:` (each known) and `metrics:`.
    void architectures_and_metrics(Suite& s, const YAML::Node& root) const;
    /// `params:`, the sweep points and the cliff settings; returns the parameters' names.
    std::set<std::string, std::less<>> sweep(Suite& s, const YAML::Node& root);
    /// Each variant's own `params:`, read with the suite's so that the sweep's points are known
    /// before any field is checked at them.
    void variant_sweeps(const Suite& s, const YAML::Node& root);
    /// A buffer's `min:` and `max:`, each a number or an expression of the sweep parameters, with
    /// min <= max at every point.
    void value_bounds(BufferSpec& b, const YAML::Node& node, const std::string& field,
                      const std::set<std::string, std::less<>>& params) const;
    /// `timing:` and `compile:`.
    void timing_and_compile_limits(Suite& s, const YAML::Node& root) const;
    /// `variants:`, each given the suite's `flops:` and `bytes:` where it has none of its own, and
    /// each checked at the points it runs at.
    void variant_list(Suite& s, const YAML::Node& variants, const std::set<std::string, std::less<>>& names,
                      const std::optional<Expression>& flops, const std::optional<Expression>& bytes);
    /// Every buffer a variant writes and we verify must also be written by the reference.
    void check_verified_buffers(const Suite& s, const VariantSpec& reference, const YAML::Node& variants) const;
    /// `path` relative to the suite's folder, made absolute with symbolic links resolved.
    fs::path resolve(const YAML::Node& node, const std::string& field, const std::string& path) const;
    /// Refuses a source or include folder outside the project, unless the user allowed it, and one
    /// in the project's .git folder always (core/readable_path.hxx).
    void check_inside_project(const YAML::Node& node, const std::string& field, const fs::path& path) const;
    /// The value of `e` at sweep point `point`, or an error naming the field and the point.
    std::int64_t value_at(const YAML::Node& node, const std::string& field, const Expression& e,
                          std::size_t point) const;
    /// Every sweep point's launch fits what any GPU can launch: 1 to 1024 threads per block (z up
    /// to 64), a grid of 1 to 2^31-1 x 65535 x 65535 blocks, and dynamic shared memory from 0 to
    /// the suite's architectures' opt-in maximum per block.
    void check_geometry(const YAML::Node& node, const std::string& field, const LaunchSpec& l) const;
    /// A buffer's element count at every sweep point: not negative, at most 1 TiB of data.
    void check_count(const YAML::Node& node, const std::string& field, const BufferSpec& b) const;
    /// A scalar given as an expression, at every sweep point: computable and within its type's
    /// range (f16, bf16 and FP8: within their largest finite value).
    void check_scalar(const YAML::Node& node, const std::string& field, const ArgSpec& a) const;
    /// A scalar of a narrow float type (f16, bf16, FP8) within its largest finite value: beyond
    /// it the kernel would get infinity, NaN or a saturated value nobody wrote. f32 and f64 convert
    /// as C++ does, as they always have.
    void check_float_scalar(const YAML::Node& node, const std::string& field, ElementType type, double value,
                            const std::string& at) const;
    /// The element type called `name`, or an error listing them; `what` says which kind of
    /// field it is ("type", "scalar type").
    ElementType element_type(const YAML::Node& node, const std::string& name, const std::string& field,
                             const std::string& what) const;
    /// FP8 exists in hardware from sm_89 (Ada) on: a suite whose static tier or GPUs include an
    /// older architecture may not hand FP8 data to a kernel.
    void check_type_on_archs(const YAML::Node& node, const std::string& field, ElementType type,
                             const std::string& what) const;
    /// An expression of the sweep (flops, bytes) is computable at every point.
    void check_computable(const YAML::Node& node, const std::string& field, const Expression& e) const;

private:
    fs::path file_;
    fs::path dir_;
    fs::path root_;
    LoadOptions options_;
    std::vector<Bindings> points_;
    std::vector<std::string> point_texts_;
    /// The points (indices into points_) that the fields being read are checked at: every point
    /// for the suite's own fields and the reference, a variant's own points for its fields.
    std::vector<std::size_t> checked_points_;
    std::map<std::string, std::vector<ParamSpec>> variant_params_; ///< each variant's own `params:`
    std::vector<std::string> archs_;
    std::vector<std::string> param_order_; ///< the sweep parameters in declaration order
    bool archs_given_ = false;             ///< the suite has an `archs:` key
    bool scanned_ = false;                 ///< a parameter is scanned: `expect:` may judge cliffs
    std::string triton_version_;           ///< `triton_version:`: what every Triton export must be built with
};

} // namespace harness::suite
