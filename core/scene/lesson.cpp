#include "core/scene/lesson.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/scene/jsonfields.h"
#include "core/text/filetext.h"

namespace attnscope {

namespace {

using Json = nlohmann::json;
constexpr std::size_t kMaxText = 16u << 10;  // one step's prose; a screenful is far less

// The string at `key`, required or not; fails with a sentence naming `where` and the key.
Result<std::string> text(const Json& object, const char* key, const std::string& where, bool required)
{
    using R = Result<std::string>;
    const auto it = object.find(key);
    if (it == object.end()) {
        if (required) return R::fail(where + " has no \"" + key + "\".");
        return R::ok({});
    }
    if (!it->is_string()) return R::fail(where + " gives \"" + key + "\" as " + quoteJsonValue(*it) + ", which is not text.");
    const std::string& s = it->get_ref<const std::string&>();
    if (required && s.find_first_not_of(" \t\n") == std::string::npos) return R::fail(where + " has an empty \"" + key + "\".");
    if (s.size() > kMaxText) return R::fail(where + " has a \"" + key + "\" longer than 16 KB.");
    return R::ok(s);
}

Status unknownKeys(const Json& object, std::initializer_list<const char*> known, const std::string& where)
{
    const Status fields = checkKnownFields(object, known);
    return fields.ok() ? fields : Status::failure(where + " " + fields.error() + ".");
}

Result<LessonQuestion> readQuestion(const Json& v, const std::string& where)
{
    using R = Result<LessonQuestion>;
    if (!v.is_object()) return R::fail(where + " is not an object.");
    if (Status s = unknownKeys(v, {"prompt", "choices"}, where); !s.ok()) return R::fail(s.error());
    LessonQuestion q;
    Result<std::string> prompt = text(v, "prompt", where, true);
    if (!prompt) return R::fail(prompt.error());
    q.prompt = *prompt;
    const auto choices = v.find("choices");
    if (choices == v.end() || !choices->is_array()) return R::fail(where + " needs \"choices\", a list.");
    if (choices->size() < 2 || choices->size() > 6) return R::fail(where + " has " + std::to_string(choices->size()) + " choices; give 2 to 6.");
    int correct = 0;
    for (std::size_t i = 0; i < choices->size(); ++i) {
        const Json& c = (*choices)[i];
        const std::string at = "choice " + std::to_string(i + 1) + " of " + where;
        if (!c.is_object()) return R::fail(at + " is not an object.");
        if (Status s = unknownKeys(c, {"text", "correct", "feedback"}, at); !s.ok()) return R::fail(s.error());
        LessonChoice choice;
        Result<std::string> t = text(c, "text", at, true);
        if (!t) return R::fail(t.error());
        Result<std::string> f = text(c, "feedback", at, true);
        if (!f) return R::fail(f.error());
        choice.text = *t;
        choice.feedback = *f;
        if (const auto ok = c.find("correct"); ok != c.end()) {
            if (!ok->is_boolean()) return R::fail(at + " gives \"correct\" as " + quoteJsonValue(*ok) + "; use true or false.");
            choice.correct = ok->get<bool>();
        }
        correct += choice.correct ? 1 : 0;
        q.choices.push_back(std::move(choice));
    }
    if (correct != 1) return R::fail(where + " marks " + std::to_string(correct) + " choices correct; mark exactly one.");
    return R::ok(std::move(q));
}

Result<LessonStep> readStep(const Json& v, const std::string& where)
{
    using R = Result<LessonStep>;
    if (!v.is_object()) return R::fail(where + " is not an object.");
    if (Status s = unknownKeys(v, {"title", "text", "state", "highlight", "question"}, where); !s.ok()) return R::fail(s.error());
    LessonStep step;
    Result<std::string> title = text(v, "title", where, true);
    if (!title) return R::fail(title.error());
    Result<std::string> body = text(v, "text", where, true);
    if (!body) return R::fail(body.error());
    step.title = *title;
    step.text = *body;
    if (const auto state = v.find("state"); state != v.end()) {
        Result<Scene> scene = sceneFromJson(*state, "the \"state\" of " + where, false);
        if (!scene) return R::fail(scene.error());
        step.state = std::move(*scene);
    }
    if (const auto h = v.find("highlight"); h != v.end()) {
        // One name or a list of names.
        const Json list = h->is_string() ? Json::array({*h}) : *h;
        if (!list.is_array() || list.size() > 8)
            return R::fail(where + " gives \"highlight\" as " + quoteJsonValue(*h) + "; give a control's name or a list of up to 8.");
        for (const Json& name : list) {
            if (!name.is_string() || name.get_ref<const std::string&>().empty() || name.get_ref<const std::string&>().size() > 64)
                return R::fail(where + " has " + quoteJsonValue(name) + " in \"highlight\", which is not a control's name.");
            step.highlight.push_back(name.get<std::string>());
        }
    }
    if (const auto q = v.find("question"); q != v.end()) {
        Result<LessonQuestion> question = readQuestion(*q, "the question of " + where);
        if (!question) return R::fail(question.error());
        step.question = std::move(*question);
    }
    return R::ok(std::move(step));
}

} // namespace

int LessonQuestion::correctIndex() const
{
    for (std::size_t i = 0; i < choices.size(); ++i)
        if (choices[i].correct) return static_cast<int>(i);
    return -1;
}

Result<Lesson> parseLesson(std::string_view textIn, const std::string& where)
{
    using R = Result<Lesson>;
    // The core's one JSON entry point: the nesting limit is checked before the parser allocates.
    Result<Json> parsed = parseJsonObject(textIn, where);
    if (!parsed) return R::fail(parsed.error());
    const Json& j = *parsed;
    if (Status s = unknownKeys(j, {"format", "version", "title", "summary", "order", "steps"}, where); !s.ok()) return R::fail(s.error());
    const auto format = j.find("format");
    if (format == j.end() || *format != "attnscope-lesson")
        return R::fail(where + " is not an AttnScope lesson (it lacks \"format\": \"attnscope-lesson\").");
    const auto version = j.find("version");
    if (version == j.end() || !version->is_number_integer() || version->get<long long>() < 1)
        return R::fail(where + " needs \"version\": 1.");
    if (version->get<long long>() > Lesson::kVersion)
        return R::fail(where + " is a version " + std::to_string(version->get<long long>()) +
                       " lesson, written for a newer AttnScope; this one reads version 1.");

    Lesson lesson;
    Result<std::string> title = text(j, "title", where, true);
    if (!title) return R::fail(title.error());
    Result<std::string> summary = text(j, "summary", where, false);
    if (!summary) return R::fail(summary.error());
    lesson.title = *title;
    lesson.summary = *summary;
    if (const auto order = j.find("order"); order != j.end()) {
        if (!order->is_number_integer() || order->get<long long>() < 0 || order->get<long long>() > 1'000'000)
            return R::fail(where + " gives \"order\" as " + quoteJsonValue(*order) + "; give a whole number from 0.");
        lesson.order = static_cast<int>(order->get<long long>());
    }
    const auto steps = j.find("steps");
    if (steps == j.end() || !steps->is_array() || steps->empty()) return R::fail(where + " needs \"steps\", a list of at least one step.");
    if (steps->size() > Lesson::kMaxSteps) return R::fail(where + " has more than 64 steps; split it into two lessons.");
    for (std::size_t i = 0; i < steps->size(); ++i) {
        Result<LessonStep> step = readStep((*steps)[i], "step " + std::to_string(i + 1) + " of " + where);
        if (!step) return R::fail(step.error());
        lesson.steps.push_back(std::move(*step));
    }
    if (!lesson.steps.back().question)
        return R::fail("the last step of " + where + " has no \"question\"; every lesson ends with a check-yourself question.");
    return R::ok(std::move(lesson));
}

Result<Lesson> readLessonFile(const std::string& path)
{
    Result<std::string> text = readSmallFile(path, Lesson::kMaxFileBytes);
    if (!text) return Result<Lesson>::fail(text.error());
    return parseLesson(*text, "'" + path + "'");
}

} // namespace attnscope
