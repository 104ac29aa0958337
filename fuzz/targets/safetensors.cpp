// The safetensors reader: the 8-byte header length, the JSON header and every tensor's range in the
// buffer. Whatever the bytes, open() either refuses with a sentence naming the file or returns tensors
// that lie inside the buffer, do not overlap, and convert to exactly numel() floats.
#include "fuzzing.h"
#include "core/io/formats/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    static const fuzzing::ScratchFolder folder;
    const std::string path = folder.write("model.safetensors", fuzzing::asText(data, size));
    attnscope::Result<attnscope::SafetensorsFile> file = attnscope::SafetensorsFile::open(path);
    if (!file) {
        FUZZ_EXPECT(file.error().find(path) != std::string::npos, "a refusal names the file");
        return 0;
    }
    for (const attnscope::TensorInfo& t : file->tensors()) {
        FUZZ_EXPECT(t.begin <= t.end && t.end <= size, "a tensor lies inside the file");
        FUZZ_EXPECT(static_cast<std::uint64_t>(t.numel()) * attnscope::byteSize(t.dtype) == t.end - t.begin,
                    "a tensor's bytes match its shape and dtype");
        const std::vector<float> values = file->readFloats(t);
        FUZZ_EXPECT(values.size() == static_cast<std::size_t>(t.numel()), "every element converts");
    }
    return 0;
}
