#include "harness/pipeline/report_header.hxx"

#include "harness/compile/nvrtc_compiler.hxx"
#include "harness/core/error.hxx"
#include "harness/core/git.hxx"
#include "harness/core/text.hxx"

namespace harness::pipeline {

namespace fs = std::filesystem;

harness::RunReport report_for(const suite::Suite& s)
{
    harness::RunReport rep;
    rep.suite = s.name;
    rep.suite_file = s.file.string();
    rep.harness_version = HARNESS_VERSION;
    rep.cuda_version = compile::nvrtc_version();
    rep.git_revision = git_revision(s.file);
    rep.timestamp = utc_timestamp();
    return rep;
}

std::string utc_timestamp()
{
    return utc_now("%Y-%m-%dT%H:%M:%SZ");
}

std::string git_revision(const fs::path& file)
{
    std::error_code ec;
    const fs::path dir = fs::absolute(file, ec).parent_path();
    if (ec) return "";
    try {
        const ProgramOutput head = run_git(dir, {"rev-parse", "--short=12", "HEAD"});
        const std::string revision = without_line_end(head.out);
        if (head.exit_code != 0 || revision.empty()) return "";
        // Changes to tracked files make the tree another than the commit, as `git describe --dirty`
        // counts them; untracked files do not (reports and build folders usually are). No optional
        // locks: asking must not rewrite the index of a tree that another git may be using.
        const ProgramOutput changes =
            run_git(dir, {"--no-optional-locks", "status", "--porcelain", "--untracked-files=no"});
        const bool dirty = changes.exit_code == 0 && !trim(changes.out).empty();
        return dirty ? revision + dirty_mark : revision;
    } catch (const Error&) {
        return ""; // no git: the run is outside any repository it can name
    }
}

} // namespace harness::pipeline
