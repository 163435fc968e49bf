#include "python/src/values.h"

#include <utility>

namespace neardup::python {

const ConfigPtr& default_config() {
  static const ConfigPtr config = std::make_shared<const ConfigHandle>(Config{});
  return config;
}

ConfigPtr config_or_default(const ConfigHandle* config) {
  return config == nullptr ? default_config() : config->shared_from_this();
}

ConfigPtr parsed(std::expected<Config, std::string> config) {
  if (!config) throw py::value_error(config.error());
  return std::make_shared<const ConfigHandle>(std::move(*config));
}

Fingerprint fingerprint_body(const Body& body, const ConfigPtr& config) {
  py::gil_scoped_release release;
  return Fingerprint{fingerprint_page(body.bytes(), body.content_type(), config->config), config};
}

Fingerprint fingerprint_of(const py::handle& page, std::string_view content_type,
                           const ConfigHandle* config) {
  if (py::isinstance<Fingerprint>(page)) {
    Fingerprint fp = page.cast<Fingerprint>();
    if (config != nullptr && config->scheme != fp.config->scheme) {
      throw py::value_error("the fingerprint is of scheme " + fp.config->scheme +
                            ", the config's scheme is " + config->scheme);
    }
    return fp;
  }
  return fingerprint_body(Body(page, content_type), config_or_default(config));
}

py::object none_if_empty(const std::string& text) {
  return text.empty() ? py::object(py::none()) : py::object(py::str(text));
}

py::list sketch_list(const Sketch& sketch) {
  py::list values(sketch.size());
  for (std::size_t i = 0; i < sketch.size(); ++i) values[i] = py::int_(sketch[i]);
  return values;
}

[[noreturn]] void throw_store_error(const StoreError& error) {
  if (error.code == StoreError::Code::kNotFound) {
    PyErr_SetString(PyExc_FileNotFoundError, error.message.c_str());
    throw py::error_already_set();
  }
  if (error.code == StoreError::Code::kInvalidArgument) throw py::value_error(error.message);
  throw StoreException(error.message);
}

std::string type_name(const py::handle& value) {
  return py::str(py::type::handle_of(value).attr("__name__"));
}

std::string str_arg(const py::handle& value, const char* name) {
  if (!PyUnicode_Check(value.ptr())) {
    throw py::type_error(std::string(name) + " must be str, not " + type_name(value));
  }
  return value.cast<std::string>();
}

const ConfigHandle* config_arg(const py::handle& value) {
  if (value.is_none()) return nullptr;
  if (!py::isinstance<ConfigHandle>(value)) {
    throw py::type_error("config must be a neardup.Config or None, not " + type_name(value));
  }
  return &value.cast<const ConfigHandle&>();
}

std::string path_arg(const py::handle& value, const char* name) {
  if (!PyUnicode_Check(value.ptr()) && !py::hasattr(value, "__fspath__")) {
    throw py::type_error(std::string(name) + " must be a str or os.PathLike, not " +
                         type_name(value));
  }
  return py::str(py::module_::import("os").attr("fspath")(value));
}

std::function<void(py::args, py::kwargs)> refuse_other_calls(std::string function,
                                                             std::string parameters, bool method) {
  return [function = std::move(function), parameters = std::move(parameters), method](
             const py::args& args, const py::kwargs& kwargs) {
    std::string given;
    for (std::size_t i = method ? 1 : 0; i < args.size(); ++i) {
      if (!given.empty()) given += ", ";
      given += type_name(args[i]);
    }
    for (const auto& [key, value] : kwargs) {
      if (!given.empty()) given += ", ";
      given += std::string(py::str(key)) + "=" + type_name(value);
    }
    throw py::type_error(function + "() takes (" + parameters + "), not (" + given + ")");
  };
}

}  // namespace neardup::python
