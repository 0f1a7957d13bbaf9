#include "harness/pipeline/static_run.hxx"

#include "harness/compile/static_tier.hxx"
#include "harness/core/text.hxx"
#include "harness/pipeline/cliff_maps.hxx"
#include "harness/pipeline/report_header.hxx"
#include "harness/pipeline/shard.hxx"

#include <algorithm>

namespace harness::pipeline {

harness::RunReport run_suite_static(const suite::Suite& s, const run::RunSettings& settings,
                                    const compile::CompileCache* cache)
{
    run::check_resolved(settings, s);
    const auto& archs = settings.archs;
    harness::RunReport rep = report_for(s);
    rep.mode = RunMode::static_tier;
    rep.arch = join(archs, ",");
    const auto cases = cases_to_run(s, settings, rep.shard);
    rep.results = compile::run_static_tier(s, cases, archs, cache, true, &rep.sass_code);
    if (!settings.variants.empty())
        std::erase_if(rep.results, [&](const CaseResult& r) {
            return std::find(settings.variants.begin(), settings.variants.end(), r.variant) == settings.variants.end();
        });
    add_static_cliff_maps(rep, s);
    if (settings.changed_only)
        rep.notes.push_back("--changed-only: the static tier runs every case (it records the SASS that GPU runs "
                            "compare with)");
    return rep;
}

} // namespace harness::pipeline
