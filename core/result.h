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

// For operations that produce nothing but may fail, read as Result is: ok(), error(). Success is a default
// Status (`return {};`); a failure carries its sentence.
class [[nodiscard]] Status {
public:
    Status() = default;
    static Status failure(std::string message)
    {
        Status s;
        s.m_error = std::move(message);
        return s;
    }
    bool ok() const { return m_error.empty(); }
    const std::string& error() const { return m_error; }

private:
    std::string m_error;  // empty means success
};

// A name (a path, a tensor, a key) as the sentences above quote it: 'name'.
std::string inQuotes(const std::string& name);

} // namespace attnscope
