#pragma once
// The static tier's predicted access figures: each launch of a case evaluated through its module's
// PTX (analysis/access_model.hxx) at the launch the GPU run would make (grid, block, dynamic shared
// memory, scalar arguments, buffers in the order the runner allocates them), its totals written as
// the predicted_* figures of the metric table and its accesses kept, worst first. A case whose
// accesses are not all predicted gets no totals, only the reasons (CaseResult::not_predicted).

#include "harness/analysis/access_model.hxx"
#include "harness/compile/kernel_cache.hxx"
#include "harness/core/case_result.hxx"
#include "harness/suite/suite.hxx"

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

namespace harness::compile {

/// The launch `index` of `variant` at `point` as the case runner launches it, each buffer at
/// analysis::model_buffer_address(its rank among the buffers the variant's cases allocate).
/// Throws std::runtime_error naming the field when the geometry or an argument does not evaluate.
analysis::LaunchShape predicted_launch_shape(const suite::Suite& suite, const suite::VariantSpec& variant,
                                             std::size_t index, const suite::Bindings& point);

/// What one launch's prediction left for the case: complete or not (with the reasons), the totals,
/// and the predicted accesses (kernel and launch left for the case to fill).
struct LaunchPrediction {
    bool complete = false;
    std::vector<std::string> reasons;
    analysis::PredictedTotals totals;
    std::vector<PredictedAccess> accesses;
};

/// Each module's PTX parsed once, for the cases that share it, and each launch's prediction kept
/// in the compile cache beside its module (under predictions/, keyed by the module's cache key and
/// the launch), so that a warm static tier evaluates nothing again. Each launch is evaluated once a
/// run, whichever thread asks first; the others get its prediction (or its failure) again.
class PtxModules {
public:
    explicit PtxModules(const CompileCache* cache = nullptr) : cache_(cache) {}

    /// The parsed PTX of `module` (keyed by `key`), or nullptr with `why` set: no PTX, or PTX the
    /// parser refused (its message names the line).
    const analysis::PtxModule* find(const std::string& key, const CompiledModule& module, std::string& why);
    /// The prediction of `symbol` of `module` at `launch`, from the cache or evaluated (and cached).
    /// Throws harness::Error (bad input) as analysis::predict_accesses does.
    LaunchPrediction predict(const std::string& key, const CompiledModule& module, const std::string& symbol,
                             const analysis::LaunchShape& launch);

private:
    struct Parsed {
        std::unique_ptr<analysis::PtxModule> module;
        std::string error;
    };
    /// A launch's prediction, or the message of the exception its evaluation threw.
    using Outcome = std::variant<LaunchPrediction, std::string>;
    LaunchPrediction evaluate(const std::string& key, const CompiledModule& module, const std::string& symbol,
                              const analysis::LaunchShape& launch);

    const CompileCache* cache_ = nullptr;
    std::mutex mutex_; ///< guards parsed_ and predicted_
    std::map<std::string, Parsed> parsed_;
    std::map<std::string, Outcome> predicted_; ///< by module key, symbol and launch
};

/// Evaluates, on every core, each launch's prediction that add_predicted_accesses() will ask `ptx`
/// for when given `cases` and their compiled `modules` (by compile key), so that those calls, made
/// one case after another, find them done.
void predict_ahead(const suite::Suite& suite, const std::vector<suite::Case>& cases,
                   const std::map<std::string, CompiledModule>& modules, PtxModules& ptx);

/// Predicts every launch of the case `r` (its launches already listed) from `module`'s PTX and adds
/// its figures: per launch under launch_metric_name() when the variant has several, summed over the
/// launches as the GPU's totals are, and its accesses worst first; or, where any access or launch is
/// not predicted, the reasons and no totals.
void add_predicted_accesses(CaseResult& r, const suite::Suite& suite, const suite::VariantSpec& variant,
                            const suite::Bindings& point, const CompiledModule& module, const std::string& module_key,
                            PtxModules& ptx);

} // namespace harness::compile
