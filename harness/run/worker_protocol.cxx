#include "harness/run/worker_protocol.hxx"

#include "harness/core/child_process.hxx"
#include "harness/core/error.hxx"

#include <array>
#include <fmt/format.h>
#include <utility>

namespace harness::run {

namespace {

constexpr std::array<std::pair<WorkerEventKind, std::string_view>, 6> event_names = {{
    {WorkerEventKind::fatal, "fatal"},
    {WorkerEventKind::ready, "ready"},
    {WorkerEventKind::begin, "begin"},
    {WorkerEventKind::point, "point"},
    {WorkerEventKind::done, "done"},
    {WorkerEventKind::failed, "failed"},
}};

/// A message as an error names it: cut short, since a result may run to many kilobytes.
std::string shortened(std::string_view text)
{
    constexpr std::size_t most = 120;
    return text.size() <= most ? std::string(text) : fmt::format("{}...", text.substr(0, most));
}

WorkerEvent item_event(WorkerEventKind kind, std::size_t item)
{
    WorkerEvent event;
    event.kind = kind;
    event.item = item;
    return event;
}

WorkerEventKind kind_named(const std::string& name)
{
    for (const auto& [kind, known] : event_names)
        if (known == name) return kind;
    throw Error(ErrorKind::internal, fmt::format("a worker sent an unknown kind of message '{}'", shortened(name)));
}

} // namespace

std::string_view worker_event_name(WorkerEventKind kind)
{
    for (const auto& [known, name] : event_names)
        if (known == kind) return name;
    return "unknown";
}

nlohmann::json event_json(const WorkerEvent& event)
{
    nlohmann::json j = {{"event", worker_event_name(event.kind)}};
    switch (event.kind) {
    case WorkerEventKind::fatal: j["message"] = event.message; break;
    case WorkerEventKind::ready:
        j["seconds"] = event.seconds;
        j["parts"] = event.parts;
        break;
    case WorkerEventKind::begin: j["item"] = event.item; break;
    case WorkerEventKind::point:
    case WorkerEventKind::done:
        j["item"] = event.item;
        j["payload"] = event.payload;
        break;
    case WorkerEventKind::failed:
        j["item"] = event.item;
        j["message"] = event.message;
        break;
    }
    return j;
}

WorkerEvent event_from_json(const nlohmann::json& message)
{
    WorkerEvent event;
    try {
        event.kind = kind_named(message.at("event").get<std::string>());
        switch (event.kind) {
        case WorkerEventKind::fatal: event.message = message.at("message").get<std::string>(); break;
        case WorkerEventKind::ready:
            event.seconds = message.at("seconds").get<double>();
            event.parts = message.at("parts").get<std::map<std::string, double>>();
            break;
        case WorkerEventKind::begin: event.item = message.at("item").get<std::size_t>(); break;
        case WorkerEventKind::point:
        case WorkerEventKind::done:
            event.item = message.at("item").get<std::size_t>();
            event.payload = message.at("payload");
            break;
        case WorkerEventKind::failed:
            event.item = message.at("item").get<std::size_t>();
            event.message = message.at("message").get<std::string>();
            break;
        }
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::internal, fmt::format("a worker sent a message that is not one of its protocol ({}): {}",
                                                     e.what(), shortened(message.dump())));
    }
    return event;
}

std::string encode_event(const WorkerEvent& event)
{
    // As write_event frames it: one line, text that is not UTF-8 replaced rather than lost.
    return event_json(event).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

WorkerEvent decode_event(std::string_view line)
{
    if (line.ends_with('\n')) line.remove_suffix(1);
    nlohmann::json message;
    try {
        message = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
        throw Error(ErrorKind::internal,
                    fmt::format("a worker sent a message that is not JSON ({}): {}", e.what(), shortened(line)));
    }
    return event_from_json(message);
}

void WorkerEvents::fatal(const std::string& message) const
{
    WorkerEvent event;
    event.kind = WorkerEventKind::fatal;
    event.message = message;
    send(event);
}

void WorkerEvents::ready(double seconds, const std::map<std::string, double>& parts) const
{
    WorkerEvent event;
    event.kind = WorkerEventKind::ready;
    event.seconds = seconds;
    event.parts = parts;
    send(event);
}

void WorkerEvents::begin(std::size_t item) const
{
    send(item_event(WorkerEventKind::begin, item));
}

void WorkerEvents::point(std::size_t item, nlohmann::json payload) const
{
    WorkerEvent event = item_event(WorkerEventKind::point, item);
    event.payload = std::move(payload);
    send(event);
}

void WorkerEvents::done(std::size_t item, nlohmann::json payload) const
{
    WorkerEvent event = item_event(WorkerEventKind::done, item);
    event.payload = std::move(payload);
    send(event);
}

void WorkerEvents::failed(std::size_t item, const std::string& message) const
{
    WorkerEvent event = item_event(WorkerEventKind::failed, item);
    event.message = message;
    send(event);
}

void WorkerEvents::send(const WorkerEvent& event) const
{
    write_all(fd_, encode_event(event));
}

} // namespace harness::run
