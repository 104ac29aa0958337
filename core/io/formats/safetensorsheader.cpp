#include "core/io/formats/safetensorsheader.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/text/filetext.h"

namespace attnscope {

namespace {

// One tensor's description as the events arrive; checked when its object closes.
struct Entry {
    enum class Part { Missing, Wrong, Present };
    std::string name;
    Part dtype = Part::Missing, shape = Part::Missing, offsets = Part::Missing;
    std::string dtypeText;
    bool shapeEntryBad = false;        // a dimension that is not a non-negative integer
    std::vector<std::uint64_t> dims;
    std::uint64_t offsetValues[2] = {0, 0};
    std::size_t offsetCount = 0;
    bool offsetEntryBad = false;
};

// The events of nlohmann's SAX parser, in a header of the form
//     { "NAME": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, ..., "__metadata__": {"k": "v"} }
// Depth 1 is the header object, 2 a tensor's object (or the metadata), 3 its shape or offsets list.
// Anything else (unknown keys, nested values where none belong) is skipped by counting brackets.
class HeaderSax {
public:
    using json = nlohmann::json;
    HeaderSax(std::uint64_t dataBytes, const std::string& file, std::vector<TensorInfo>& tensors,
              std::map<std::string, std::string>& metadata)
        : m_dataBytes(dataBytes), m_file(file), m_tensors(tensors), m_metadata(metadata)
    {
    }

    // The first problem found; parsing stops there, so a hostile header is refused as soon as its bytes
    // decide, not after all of its 100 MB. A header that breaks JSON before its first problem is
    // reported as invalid JSON instead.
    std::string error;
    bool invalidJson = false;

    bool null() { return scalar(Kind::Other); }
    bool boolean(bool) { return scalar(Kind::Other); }
    bool number_integer(json::number_integer_t) { return scalar(Kind::Other); }
    bool number_unsigned(json::number_unsigned_t v)
    {
        m_unsigned = v;
        return scalar(Kind::Unsigned);
    }
    bool number_float(json::number_float_t, const json::string_t&) { return scalar(Kind::Other); }
    bool string(json::string_t& s)
    {
        m_string = &s;
        return scalar(Kind::String);
    }
    bool binary(json::binary_t&) { return scalar(Kind::Other); }

    bool start_object(std::size_t)
    {
        if (!deeper()) return false;
        if (m_skip > 0) return ++m_skip, true;
        if (m_depth == 0) return m_depth = 1, true;
        if (m_depth == 1) {
            m_depth = 2;
            if (m_inMetadata) return true;
            m_entry = Entry{};
            m_entry.name = m_key;
            return true;
        }
        return containerWhereScalarBelongs();
    }
    bool end_object()
    {
        --m_nesting;
        if (m_skip > 0) return --m_skip, true;
        if (m_depth == 2) {
            m_depth = 1;
            if (m_inMetadata) {
                m_inMetadata = false;
                return true;
            }
            return finishEntry();
        }
        m_depth = 0;  // the header itself closed
        return true;
    }
    bool start_array(std::size_t)
    {
        if (!deeper()) return false;
        if (m_skip > 0) return ++m_skip, true;
        if (m_depth == 0) return fail("the header of " + m_file + " is not a JSON object.");
        if (m_depth == 1) {
            if (m_inMetadata) return ++m_skip, true;  // metadata that is not an object is ignored
            return fail("tensor " + inQuotes(m_key) + " in " + m_file + " is not described by a JSON object.");
        }
        if (m_depth == 2 && !m_inMetadata && (m_field == Field::Shape || m_field == Field::Offsets)) {
            m_depth = 3;
            (m_field == Field::Shape ? m_entry.shape : m_entry.offsets) = Entry::Part::Present;
            return true;
        }
        return containerWhereScalarBelongs();
    }
    bool end_array()
    {
        --m_nesting;
        if (m_skip > 0) return --m_skip, true;
        m_depth = 2;
        return true;
    }
    bool key(json::string_t& k)
    {
        if (m_skip > 0) return true;
        if (m_depth == 1) {
            m_key = k;
            m_inMetadata = k == "__metadata__";
        } else if (m_depth == 2 && m_inMetadata) {
            m_key = k;
        } else if (m_depth == 2) {
            m_field = k == "dtype" ? Field::Dtype : k == "shape" ? Field::Shape : k == "data_offsets" ? Field::Offsets : Field::Other;
            // A key given twice counts once, as in a JSON object: its last value.
            if (m_field == Field::Shape) m_entry.dims.clear(), m_entry.shapeEntryBad = false;
            if (m_field == Field::Offsets) m_entry.offsetCount = 0, m_entry.offsetEntryBad = false;
        }
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&)
    {
        invalidJson = true;
        return false;
    }

private:
    enum class Kind { Unsigned, String, Other };
    enum class Field { Dtype, Shape, Offsets, Other };

    bool fail(std::string message)
    {
        error = std::move(message);
        return false;  // stops the parser
    }

    // One more level of brackets: the nesting limit of parseJson, counted as the events arrive, so 90 MB
    // of '[' stop at the 65th.
    bool deeper()
    {
        if (++m_nesting <= kMaxJsonDepth) return true;
        return fail(jsonTooDeep("the header of " + m_file));
    }

    // An object or a list inside a tensor's description where a scalar belongs: the value is marked wrong
    // and its contents skipped.
    bool containerWhereScalarBelongs()
    {
        if (m_depth == 3) {
            if (m_field == Field::Shape) m_entry.shapeEntryBad = true;
            else m_entry.offsetEntryBad = true;
        } else if (m_depth == 2 && !m_inMetadata) {
            if (m_field == Field::Dtype) m_entry.dtype = Entry::Part::Wrong;
            if (m_field == Field::Shape) m_entry.shape = Entry::Part::Wrong;
            if (m_field == Field::Offsets) m_entry.offsets = Entry::Part::Wrong;
        }
        ++m_skip;
        return true;
    }

    bool scalar(Kind kind)
    {
        if (m_skip > 0) return true;
        if (m_depth == 0) return fail("the header of " + m_file + " is not a JSON object.");
        if (m_depth == 1) {
            if (m_inMetadata) return true;
            return fail("tensor " + inQuotes(m_key) + " in " + m_file + " is not described by a JSON object.");
        }
        if (m_depth == 2 && m_inMetadata) {
            if (kind == Kind::String) m_metadata[m_key] = *m_string;
            return true;
        }
        if (m_depth == 2) {
            switch (m_field) {
            case Field::Dtype:
                m_entry.dtype = kind == Kind::String ? Entry::Part::Present : Entry::Part::Wrong;
                if (kind == Kind::String) m_entry.dtypeText = *m_string;
                break;
            case Field::Shape: m_entry.shape = Entry::Part::Wrong; break;
            case Field::Offsets: m_entry.offsets = Entry::Part::Wrong; break;
            case Field::Other: break;
            }
            return true;
        }
        // depth 3: an entry of the shape or of the offsets
        if (m_field == Field::Shape) {
            // A list of 50 million dimensions would cost 400 MB to keep; no model's tensor has more than a few.
            if (m_entry.dims.size() == kMaxSafetensorsDims)
                return fail("tensor " + inQuotes(m_entry.name) + " in " + m_file + " has a shape of more than " +
                            std::to_string(kMaxSafetensorsDims) + " dimensions, which no model's tensor has.");
            if (kind == Kind::Unsigned) m_entry.dims.push_back(m_unsigned);
            else m_entry.shapeEntryBad = true;
        } else {
            if (kind != Kind::Unsigned) m_entry.offsetEntryBad = true;
            else if (m_entry.offsetCount < 2) m_entry.offsetValues[m_entry.offsetCount] = m_unsigned;
            ++m_entry.offsetCount;
        }
        return true;
    }

    // The same checks, in the same order and words, as every tensor has always been given.
    bool finishEntry()
    {
        const Entry& e = m_entry;
        const std::string tensor = "tensor " + inQuotes(e.name) + " in " + m_file;
        if (e.dtype != Entry::Part::Present) return fail(tensor + " has no dtype string.");
        if (e.shape != Entry::Part::Present) return fail(tensor + " has no shape list.");
        if (e.offsets != Entry::Part::Present || e.offsetEntryBad || e.offsetCount != 2)
            return fail(tensor + " has no data_offsets pair of non-negative integers.");

        TensorInfo info;
        info.name = e.name;
        if (e.dtypeText == "F32") info.dtype = DType::F32;
        else if (e.dtypeText == "F16") info.dtype = DType::F16;
        else if (e.dtypeText == "BF16") info.dtype = DType::BF16;
        else
            return fail(tensor + " has dtype " + e.dtypeText + ", which AttnScope cannot read (it reads F32, F16 and BF16).");

        if (e.shapeEntryBad) return fail(tensor + " has a shape entry that is not a non-negative integer.");
        // numel can overflow with a hostile shape: stop as soon as it passes what the buffer could hold.
        std::uint64_t numel = 1;
        bool tooBig = false;
        info.shape.reserve(e.dims.size());
        for (const std::uint64_t dim : e.dims) {
            if (dim > static_cast<std::uint64_t>(INT64_MAX)) tooBig = true;
            else info.shape.push_back(static_cast<std::int64_t>(dim));
            if (dim != 0 && numel > m_dataBytes / dim) tooBig = true;
            else numel *= dim;
        }
        info.begin = e.offsetValues[0];
        info.end = e.offsetValues[1];
        if (info.begin > info.end || info.end > m_dataBytes)
            return fail(tensor + " has data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
                        "] outside the " + std::to_string(m_dataBytes) + "-byte data buffer.");
        const std::uint64_t expected = numel * byteSize(info.dtype);
        if (tooBig || expected != info.end - info.begin)
            return fail(tensor + " has shape " + shapeText(info.shape) + " of " + e.dtypeText + " but its data_offsets span " +
                        std::to_string(info.end - info.begin) + " bytes, which does not match.");
        // A name given twice keeps its last description, as a JSON object would.
        const auto [at, added] = m_indexOfName.emplace(info.name, m_tensors.size());
        if (added) m_tensors.push_back(std::move(info));
        else m_tensors[at->second] = std::move(info);
        return true;
    }

    std::uint64_t m_dataBytes;
    const std::string& m_file;
    std::vector<TensorInfo>& m_tensors;
    std::map<std::string, std::string>& m_metadata;
    std::unordered_map<std::string, std::size_t> m_indexOfName;

    int m_nesting = 0;     // brackets open, skipped ones included
    int m_depth = 0;       // 0 outside the header object
    long m_skip = 0;       // > 0 while inside a value being skipped
    bool m_inMetadata = false;
    std::string m_key;     // the last key at depth 1 (a tensor's name) or in the metadata
    Field m_field = Field::Other;
    Entry m_entry;
    std::uint64_t m_unsigned = 0;
    json::string_t* m_string = nullptr;
};

} // namespace

Status readSafetensorsHeader(std::string_view json, std::uint64_t dataBytes, const std::string& file,
                             std::vector<TensorInfo>& tensors, std::map<std::string, std::string>& metadata)
{
    // 1. A header that opens a list or a scalar is refused by its first byte, unread.
    if (jsonStart(json) == JsonStart::OtherValue) return Status::failure("the header of " + file + " is not a JSON object.");
    // 2. The events stop at the first problem, the nesting limit included.
    HeaderSax sax(dataBytes, file, tensors, metadata);
    const bool whole = nlohmann::json::sax_parse(json.begin(), json.end(), &sax);
    const bool invalid = sax.invalidJson || (!whole && sax.error.empty());
    if (!invalid && sax.error.empty()) return {};
    tensors.clear();
    return Status::failure(invalid ? "the header of " + file + " is not valid JSON." : sax.error);
}

} // namespace attnscope
