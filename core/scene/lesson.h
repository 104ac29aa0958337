#pragma once
// A guided lesson: a JSON file of steps, each of which puts the window in a state (a partial scene, see
// scene/scene.h), points at the control to touch and may ask a check-yourself question. The shipped lessons
// live in resources/lessons/; a teacher writes a new one without code. docs/user-guide.md documents the format:
//
//     {
//       "format": "attnscope-lesson", "version": 1,
//       "title": "Causal masking", "summary": "Why a decoder may not look ahead.", "order": 5,
//       "steps": [
//         {
//           "title": "Switch the mask off",
//           "text": "Paragraphs separated by a blank line.",
//           "state": {"model": "builtin", "text": "...", "settings": {"mask": "causal"}, "tab": "attention"},
//           "highlight": ["causal"],
//           "question": {"prompt": "...", "choices": [{"text": "...", "correct": true, "feedback": "..."}, ...]}
//         }
//       ]
//     }
//
// Rules checked here: at least one step; every step has a title and text; the last step asks a question;
// a question has 2 to 6 choices, exactly one correct, and feedback on every choice (the reader sees it the
// moment they choose). The names in "highlight" are checked by the window, which knows its controls.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/scene/scene.h"
#include "core/result.h"

namespace attnscope {

struct LessonChoice {
    std::string text;
    bool correct = false;
    std::string feedback;  // why this answer is right or wrong, shown as soon as it is chosen
    bool operator==(const LessonChoice&) const = default;
};

struct LessonQuestion {
    std::string prompt;
    std::vector<LessonChoice> choices;
    int correctIndex() const;
    bool operator==(const LessonQuestion&) const = default;
};

struct LessonStep {
    std::string title;
    std::string text;
    Scene state;                         // only the fields the step sets
    std::vector<std::string> highlight;  // names of the controls to point at
    std::optional<LessonQuestion> question;
    bool operator==(const LessonStep&) const = default;
};

struct Lesson {
    static constexpr int kVersion = 1;
    static constexpr std::size_t kMaxFileBytes = 1u << 20;
    static constexpr std::size_t kMaxSteps = 64;

    std::string title;
    std::string summary;
    int order = 1000;  // lessons are listed by order, then title
    std::vector<LessonStep> steps;
    bool operator==(const Lesson&) const = default;
};

// `where` names the file in error sentences.
Result<Lesson> parseLesson(std::string_view text, const std::string& where);
Result<Lesson> readLessonFile(const std::string& path);

} // namespace attnscope
