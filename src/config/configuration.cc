#include "config/configuration.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <sstream>

#include "common/strings.h"
#include "config/key_names.h"
#include "pugixml.hpp"

namespace tony::config {

std::string ValueSource::ToString() const {
  switch (kind) {
    case SourceKind::kDefault:
      return "default";
    case SourceKind::kConfFile:
    case SourceKind::kSiteFile:
      return line > 0 ? StrCat(file, ":", line) : file;
    case SourceKind::kConfFlag:
      return "--conf";
    case SourceKind::kFlag:
      return flag;
    case SourceKind::kDerived:
      return "derived";
  }
  return "unknown";
}

bool Configuration::IsMultiValued(std::string_view key) {
  return key == "tony.containers.envs" || key == "tony.execution.envs" ||
         key == "tony.containers.resources";
}

void Configuration::Set(std::string_view key, std::string value, const ValueSource& source,
                        bool final) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    entries_.emplace(std::string(key), ConfigEntry{std::move(value), source, {}, final});
    return;
  }
  ConfigEntry& entry = it->second;
  if (entry.final) {
    ignored_final_.push_back(StrCat(key, " (from ", source.ToString(), ")"));
    return;
  }
  const bool append =
      IsMultiValued(key) && entry.source.kind != SourceKind::kDefault && !entry.value.empty();
  if (append) {
    if (!value.empty()) {
      // In place: a file that sets the key n times stays linear, not O(n^2) in copies.
      entry.value.push_back(',');
      entry.value.append(value);
      entry.appended.push_back(entry.source);
      entry.source = source;
    }
  } else {
    entry.value = std::move(value);
    entry.appended.clear();
    entry.source = source;
  }
  entry.final = entry.final || final;
}

void Configuration::Replace(std::string_view key, std::string value, const ValueSource& source) {
  auto& entry = entries_[std::string(key)];
  entry.value = std::move(value);
  entry.appended.clear();
  entry.source = source;
}

const ConfigEntry* Configuration::Find(std::string_view key) const {
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

std::string Configuration::Get(std::string_view key) const {
  const ConfigEntry* entry = Find(key);
  return entry ? entry->value : std::string();
}

namespace {

// Line numbers of byte offsets: the line starts are found once, then each lookup is a binary
// search, so a file's n properties cost O(size + n log n), not a rescan from the top for each.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) : size_(text.size()) {
    line_starts_.push_back(0);
    for (size_t i = text.find('\n'); i != std::string_view::npos; i = text.find('\n', i + 1)) {
      line_starts_.push_back(i + 1);
    }
  }
  // 1-based; 0 for an unknown (negative) offset. Offsets past the end count as the last line.
  [[nodiscard]] int LineOf(ptrdiff_t offset) const {
    if (offset < 0) return 0;
    const size_t at = std::min(static_cast<size_t>(offset), size_);
    return static_cast<int>(std::upper_bound(line_starts_.begin(), line_starts_.end(), at) -
                            line_starts_.begin());
  }

 private:
  size_t size_;
  std::vector<size_t> line_starts_;
};

std::string Trimmed(const char* s) { return std::string(StripWhitespace(s)); }

std::string TooLarge(const std::string& label, std::string_view size) {
  return StrCat(label, ": the configuration file is ", size, "; tony reads at most ",
                Configuration::kMaxXmlBytes >> 20, " MiB");
}

}  // namespace

absl::Status Configuration::LoadXmlFile(const std::string& path, SourceKind kind) {
  // Non-blocking, so that a FIFO cannot hang the open; anything but a regular file is refused
  // before a byte is read, so /dev/zero or a FIFO never make tony read without end.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    std::string message = StrCat(path, ": cannot read configuration file: ", strerror(error));
    return error == ENOENT ? absl::NotFoundError(message) : absl::PermissionDeniedError(message);
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(
        StrCat(path, ": not a regular file (a configuration file must be a plain XML file)"));
  }
  if (static_cast<uint64_t>(info.st_size) > kMaxXmlBytes) {
    ::close(fd);
    return absl::InvalidArgumentError(TooLarge(path, StrCat(info.st_size, " bytes")));
  }
  // Read to the end, but never more than the limit: the file may grow after fstat.
  std::string text;
  text.resize(static_cast<size_t>(info.st_size) + 1);
  size_t length = 0;
  while (true) {
    if (length == text.size()) {
      if (text.size() > kMaxXmlBytes) break;
      text.resize(std::min<size_t>(text.size() * 2, kMaxXmlBytes + 1));
    }
    const ssize_t n = ::read(fd, text.data() + length, text.size() - length);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return absl::DataLossError(StrCat(path, ": error while reading: ", strerror(error)));
    }
    if (n == 0) break;
    length += static_cast<size_t>(n);
  }
  ::close(fd);
  if (length > kMaxXmlBytes) return absl::InvalidArgumentError(TooLarge(path, "larger"));
  text.resize(length);
  return LoadXmlString(text, path, kind);
}

absl::Status Configuration::LoadXmlString(std::string_view xml, const std::string& label,
                                          SourceKind kind) {
  if (xml.size() > kMaxXmlBytes) {
    return absl::InvalidArgumentError(TooLarge(label, StrCat(xml.size(), " bytes")));
  }
  const LineIndex lines(xml);
  // XML has no NUL character, and pugixml would take one for the end of the text. Read as UTF-8
  // only, so that this also refuses UTF-16 and UTF-32 files instead of guessing.
  if (const size_t nul = xml.find('\0'); nul != std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat(label, ":", lines.LineOf(static_cast<ptrdiff_t>(nul)),
               ": NUL byte (a configuration file must be UTF-8 text)"));
  }
  // pugixml's parser and document are iterative (no recursion on nesting depth), expand no
  // entities beyond XML's five and character references, and read no DTD; a DOCTYPE is refused
  // below so that its entities never look as if they took effect.
  pugi::xml_document doc;
  pugi::xml_parse_result parsed = doc.load_buffer(
      xml.data(), xml.size(), pugi::parse_default | pugi::parse_comments | pugi::parse_doctype,
      pugi::encoding_utf8);
  if (!parsed) {
    return absl::InvalidArgumentError(
        StrCat(label, ":", lines.LineOf(parsed.offset), ": malformed XML: ", parsed.description()));
  }
  for (pugi::xml_node node : doc.children()) {
    if (node.type() == pugi::node_doctype) {
      return absl::InvalidArgumentError(
          StrCat(label, ":", std::max(1, lines.LineOf(node.offset_debug())),
                 ": <!DOCTYPE> is not allowed in a configuration file (tony reads no DTD and "
                 "expands no entities)"));
    }
  }
  pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != "configuration") {
    return absl::InvalidArgumentError(StrCat(
        label, ":", lines.LineOf(root.offset_debug()),
        ": expected <configuration> as the root element, found <", ForMessage(root.name()), ">"));
  }
  // Validate the whole file before applying anything, so a bad file changes nothing.
  struct Pending {
    std::string name, value;
    bool final;
    int line;
  };
  std::vector<Pending> pending;
  for (pugi::xml_node node : root.children()) {
    if (node.type() != pugi::node_element) continue;
    const int line = lines.LineOf(node.offset_debug());
    if (std::string_view(node.name()) != "property") {
      return absl::InvalidArgumentError(StrCat(label, ":", line, ": unexpected element <",
                                               ForMessage(node.name()), "> (expected <property>)"));
    }
    pugi::xml_node name_node = node.child("name");
    std::string name = Trimmed(name_node.child_value());
    if (!name_node || name.empty()) {
      return absl::InvalidArgumentError(StrCat(label, ":", line, ": <property> has no <name>"));
    }
    // Values keep inner whitespace but, as in Hadoop, not surrounding newlines and indentation.
    std::string value = Trimmed(node.child("value").child_value());
    std::string final_text = ToLower(Trimmed(node.child("final").child_value()));
    pending.push_back({std::move(name), std::move(value), final_text == "true", line});
  }
  for (Pending& p : pending) {
    Set(p.name, std::move(p.value), ValueSource::File(kind, label, p.line), p.final);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Configuration::DumpedProperty>> Configuration::ReadDumped(
    const std::string& path) {
  Configuration plain;
  if (absl::Status loaded = plain.LoadXmlFile(path, SourceKind::kConfFile); !loaded.ok()) {
    return loaded;
  }
  // Validated above; the sources are read from the same document.
  pugi::xml_document doc;
  (void)doc.load_file(path.c_str(), pugi::parse_default, pugi::encoding_utf8);
  std::map<std::string, std::string> sources;
  for (pugi::xml_node node : doc.document_element().children("property")) {
    sources[Trimmed(node.child("name").child_value())] =
        Trimmed(node.child("source").child_value());
  }
  std::vector<DumpedProperty> rows;
  for (const auto& [key, entry] : plain.entries()) {
    rows.push_back({key, entry.value, sources[key]});
  }
  return rows;
}

std::string Configuration::ToXml() const {
  pugi::xml_document doc;
  pugi::xml_node decl = doc.append_child(pugi::node_declaration);
  decl.append_attribute("version") = "1.0";
  pugi::xml_node root = doc.append_child("configuration");
  for (const auto& [key, entry] : entries_) {
    pugi::xml_node property = root.append_child("property");
    property.append_child("name").text().set(key.c_str());
    property.append_child("value").text().set(entry.value.c_str());
    if (entry.final) property.append_child("final").text().set("true");
    property.append_child("source").text().set(entry.source.ToString().c_str());
  }
  std::ostringstream out;
  doc.save(out, "  ");
  return out.str();
}

}  // namespace tony::config
