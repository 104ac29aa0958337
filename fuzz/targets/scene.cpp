// A scene file (FILE.attnscope), read by path as the window and `render --scene` read it. A refusal names
// the file; an accepted scene is written back and read again to the same scene (so Save never writes
// something Open refuses), and its numbers are inside the ranges the window can hold.
#include <algorithm>

#include "fuzzing.h"
#include "core/scene/scene.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::string path = folder.write("input.attnscope", fuzzing::asText(data, size));
    attnscope::Result<attnscope::Scene> scene = attnscope::readSceneFile(path);
    if (!scene) {
        FUZZ_EXPECT(scene.error().find(path) != std::string::npos, "a refusal names the file");
        return 0;
    }
    if (scene->settings) {
        const attnscope::AttentionSettings& s = *scene->settings;
        FUZZ_EXPECT(s.temperature > 0.0, "an accepted temperature is positive");
        FUZZ_EXPECT(std::is_sorted(s.blockedKeys.begin(), s.blockedKeys.end()), "blocked keys are sorted");
        FUZZ_EXPECT(s.tokenLimit >= 0, "a token limit is 0 (the model's context) or more");
    }
    if (scene->focus) FUZZ_EXPECT(scene->focus->layer >= 0 && scene->focus->head >= 0, "a focused head is not negative");
    const std::string again = attnscope::formatScene(*scene);
    attnscope::Result<attnscope::Scene> reread = attnscope::parseScene(again, "the scene written back");
    FUZZ_EXPECT(reread.hasValue(), "a scene that was read is written as one that reads back");
    FUZZ_EXPECT(*reread == *scene, "writing and reading a scene gives the same scene");
    return 0;
}
