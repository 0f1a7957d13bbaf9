#include "harness/core/git.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <fmt/format.h>

namespace harness {

std::vector<std::string> git_command(const std::filesystem::path& folder, const std::vector<std::string>& args)
{
    // No hooks: reading a repository, or checking a commit out for a bisect step, must not run code
    // the repository carries (docs/bisect.md).
    std::vector<std::string> argv = {"git", "-c", "core.hooksPath=/dev/null"};
    if (!folder.empty()) argv.insert(argv.end(), {"-C", folder.string()});
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
}

ProgramOutput run_git(const std::filesystem::path& folder, const std::vector<std::string>& args)
{
    return run_program(git_command(folder, args));
}

std::string git_output(const std::filesystem::path& folder, const std::vector<std::string>& args)
{
    ProgramOutput r = run_git(folder, args);
    if (r.exit_code != 0) {
        const std::string ended =
            r.exit_code < 0 ? std::string("was ended by a signal") : fmt::format("exited with status {}", r.exit_code);
        const std::string_view message = trim(r.err);
        throw Error(ErrorKind::environment, fmt::format("git {} failed{}: it {}{}{}", join(args, " "),
                                                        folder.empty() ? std::string() : " in " + folder.string(),
                                                        ended, message.empty() ? "" : ": ", message));
    }
    return std::move(r.out);
}

std::string without_line_end(std::string text)
{
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    return text;
}

} // namespace harness
