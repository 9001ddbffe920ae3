#include "config/configuration.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/strings.h"
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
      entry.value = StrCat(entry.value, ",", value);
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

int LineOf(std::string_view text, ptrdiff_t offset) {
  if (offset < 0) return 0;
  offset = std::min<ptrdiff_t>(offset, static_cast<ptrdiff_t>(text.size()));
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + offset, '\n'));
}

std::string Trimmed(const char* s) { return std::string(StripWhitespace(s)); }

}  // namespace

absl::Status Configuration::LoadXmlFile(const std::string& path, SourceKind kind) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(StrCat(path, ": cannot read configuration file"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(StrCat(path, ": error while reading"));
  }
  return LoadXmlString(buffer.str(), path, kind);
}

absl::Status Configuration::LoadXmlString(std::string_view xml, const std::string& label,
                                          SourceKind kind) {
  pugi::xml_document doc;
  pugi::xml_parse_result parsed =
      doc.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_comments);
  if (!parsed) {
    return absl::InvalidArgumentError(
        StrCat(label, ":", LineOf(xml, parsed.offset), ": malformed XML: ", parsed.description()));
  }
  pugi::xml_node root = doc.document_element();
  if (std::string_view(root.name()) != "configuration") {
    return absl::InvalidArgumentError(
        StrCat(label, ":", LineOf(xml, root.offset_debug()),
               ": expected <configuration> as the root element, found <", root.name(), ">"));
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
    const int line = LineOf(xml, node.offset_debug());
    if (std::string_view(node.name()) != "property") {
      return absl::InvalidArgumentError(StrCat(label, ":", line, ": unexpected element <",
                                               node.name(), "> (expected <property>)"));
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
