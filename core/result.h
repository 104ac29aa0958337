#pragma once
// A value or a sentence for a person saying why there is none. File and user-input problems travel as
// Result; programming errors are assertions. The core never prints and never exits.
#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace attnscope {

template <class T>
class [[nodiscard]] Result {
public:
    static Result ok(T value) { Result r; r.m_value.emplace(std::move(value)); return r; }
    static Result fail(std::string message) { Result r; r.m_error = std::move(message); return r; }

    bool hasValue() const { return m_value.has_value(); }
    explicit operator bool() const { return hasValue(); }
    const std::string& error() const { return m_error; }

    T& value() { assert(m_value); return *m_value; }
    const T& value() const { assert(m_value); return *m_value; }
    T& operator*() { return value(); }
    const T& operator*() const { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

private:
    Result() = default;
    std::optional<T> m_value;
    std::string m_error;
};

// For operations that produce nothing but may fail.
struct [[nodiscard]] Status {
    std::string error;  // empty means success
    bool ok() const { return error.empty(); }
    static Status success() { return {}; }
    static Status failure(std::string message) { return {std::move(message)}; }
};

// A name (a path, a tensor, a key) as the sentences above quote it: 'name'.
std::string inQuotes(const std::string& name);

} // namespace attnscope
