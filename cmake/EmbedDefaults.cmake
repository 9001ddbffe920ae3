# Writes OUTPUT, a C++ file defining tony::config::BuiltInDefaultsXml() that returns INPUT's text.
file(READ ${INPUT} content)
file(WRITE ${OUTPUT}
  "// Generated from tony-default.xml by cmake/EmbedDefaults.cmake. Do not edit.\n"
  "#include <string_view>\n"
  "namespace tony::config {\n"
  "std::string_view BuiltInDefaultsXml() {\n"
  "  static constexpr char kXml[] = R\"TONYDEFAULTS(${content})TONYDEFAULTS\";\n"
  "  return {kXml, sizeof(kXml) - 1};\n"
  "}\n"
  "}  // namespace tony::config\n")
