// Python values and the project's: the config and fingerprint objects the module hands out, page
// bodies read in place, and the arguments of every call checked here so that a wrong one raises
// a short error naming it (module.cc, index.cc).
#pragma once

#include <pybind11/pybind11.h>

#include <expected>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/sketch.h"
#include "config/config.h"
#include "pipeline/pipeline.h"
#include "store/index.h"

namespace neardup::python {

namespace py = pybind11;

// A validated Config and its scheme id, shared by the fingerprints computed under it.
// Python holds it by shared_ptr, so a call given one keeps it with shared_from_this().
struct ConfigHandle : std::enable_shared_from_this<ConfigHandle> {
  explicit ConfigHandle(Config c) : config(std::move(c)), scheme(scheme_id(config)) {}
  Config config;
  std::string scheme;
};
using ConfigPtr = std::shared_ptr<const ConfigHandle>;

// The defaults' handle, made once.
const ConfigPtr& default_config();
// `config`'s own handle, or the defaults' when null.
ConfigPtr config_or_default(const ConfigHandle* config);
// A loaded config as a handle; ValueError naming what was wrong otherwise.
ConfigPtr parsed(std::expected<Config, std::string> config);

// One page's pipeline result under the config it was computed with.
struct Fingerprint {
  PageFingerprint page;
  ConfigPtr config;
};

// A page body as bytes the pipeline can read without the GIL, and the Content-Type to decode it
// with. A str is already text: its UTF-8 form is decoded as UTF-8 whatever the page declares.
class Body {
 public:
  Body(const py::handle& html, std::string_view content_type) : content_type_(content_type) {
    if (PyBytes_Check(html.ptr())) {
      char* data = nullptr;
      Py_ssize_t size = 0;
      PyBytes_AsStringAndSize(html.ptr(), &data, &size);
      bytes_ = std::string_view(data, static_cast<std::size_t>(size));
    } else if (PyUnicode_Check(html.ptr())) {
      Py_ssize_t size = 0;
      const char* data = PyUnicode_AsUTF8AndSize(html.ptr(), &size);
      if (data == nullptr) throw py::error_already_set();
      bytes_ = std::string_view(data, static_cast<std::size_t>(size));
      content_type_ = utf8_content_type(content_type);
    } else if (PyObject_CheckBuffer(html.ptr())) {
      Py_buffer view;  // contiguous bytes, else BufferError
      if (PyObject_GetBuffer(html.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
      copy_.assign(static_cast<const char*>(view.buf), static_cast<std::size_t>(view.len));
      PyBuffer_Release(&view);
      bytes_ = copy_;
    } else {
      throw py::type_error("html must be bytes or str (or a bytes-like object), not " +
                           std::string(py::str(py::type::handle_of(html).attr("__name__"))));
    }
  }

  Body(const Body&) = delete;  // bytes_ may point into copy_
  Body& operator=(const Body&) = delete;

  std::string_view bytes() const { return bytes_; }
  std::string_view content_type() const { return content_type_; }

 private:
  // The media type of content_type (text/html when none) with charset=utf-8.
  static std::string utf8_content_type(std::string_view content_type) {
    std::string_view media = content_type.substr(0, content_type.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
    return std::string(media.empty() ? "text/html" : media) + "; charset=utf-8";
  }

  std::string_view bytes_;
  std::string copy_;
  std::string content_type_;
};

// Runs the pipeline on `body` under `config`, without the GIL.
Fingerprint fingerprint_body(const Body& body, const ConfigPtr& config);
// A page argument: a Fingerprint as it is (it must be of config's scheme), else a body to
// fingerprint under config (the default config when None).
Fingerprint fingerprint_of(const py::handle& page, std::string_view content_type,
                           const ConfigHandle* config);

// None for "", else the str.
py::object none_if_empty(const std::string& text);
// A sketch's values as a list of ints.
py::list sketch_list(const Sketch& sketch);

// Raised for a store that cannot be opened or read (StoreError in Python).
struct StoreException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// `error` raised as Python sees it: FileNotFoundError (no store), ValueError (a bad argument),
// else StoreError.
[[noreturn]] void throw_store_error(const StoreError& error);

// Arguments are taken as Python objects and converted here, so that a wrong one raises a short
// TypeError naming it: pybind11's own error for a call that fits no signature quotes the repr()
// of every argument, a page's whole body.
std::string type_name(const py::handle& value);
std::string str_arg(const py::handle& value, const char* name);
// A neardup.Config, or null for None.
const ConfigHandle* config_arg(const py::handle& value);
// A str or os.PathLike, as a path.
std::string path_arg(const py::handle& value, const char* name);

// The last overload of a function: a call that fits none before it (a missing or misspelt
// argument) raises a TypeError naming the parameters and the types given, never the values.
std::function<void(py::args, py::kwargs)> refuse_other_calls(std::string function,
                                                             std::string parameters, bool method);

}  // namespace neardup::python
