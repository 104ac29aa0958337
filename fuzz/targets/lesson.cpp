// A lesson file, read by path as the Lessons panel reads a teacher's file. A refusal names the file; an
// accepted lesson keeps the promises the panel relies on: at least one step, each with a title and text,
// and a last step whose question has one right answer among 2 to 6 choices, each with feedback.
#include "fuzzing.h"
#include "core/scene/lesson.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::string path = folder.write("lesson.json", fuzzing::asText(data, size));
    attnscope::Result<attnscope::Lesson> lesson = attnscope::readLessonFile(path);
    if (!lesson) {
        FUZZ_EXPECT(lesson.error().find(path) != std::string::npos, "a refusal names the file");
        return 0;
    }
    FUZZ_EXPECT(!lesson->steps.empty() && lesson->steps.size() <= attnscope::Lesson::kMaxSteps, "a lesson has 1 to 64 steps");
    for (const attnscope::LessonStep& step : lesson->steps) {
        FUZZ_EXPECT(!step.title.empty() && !step.text.empty(), "every step has a title and text");
        if (!step.question) continue;
        const std::size_t n = step.question->choices.size();
        FUZZ_EXPECT(n >= 2 && n <= 6, "a question has 2 to 6 choices");
        FUZZ_EXPECT(step.question->correctIndex() >= 0, "a question has a right answer");
        for (const attnscope::LessonChoice& c : step.question->choices) FUZZ_EXPECT(!c.feedback.empty(), "every choice has feedback");
    }
    FUZZ_EXPECT(lesson->steps.back().question.has_value(), "the last step asks a question");
    return 0;
}
