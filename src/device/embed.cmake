# Writes OUT: a C++ file defining polyred::deviceSources(), the device library
# headers as (name, text) pairs, so NVRTC can #include them at run time.
string(REPLACE "|" ";" HEADERS "${HEADERS}")  # passed '|'-separated (see src/CMakeLists.txt)
set(body "// Generated from src/device/*.cuh by embed.cmake. Do not edit.\n#include \"codegen/device_sources.h\"\nnamespace polyred {\nconst std::vector<DeviceSource>& deviceSources() {\n  static const std::vector<DeviceSource> sources = {\n")
foreach(h ${HEADERS})
  get_filename_component(name ${h} NAME)
  file(READ ${h} text)
  string(APPEND body "    {\"${name}\", R\"polyred_embed(${text})polyred_embed\"},\n")
endforeach()
string(APPEND body "  };\n  return sources;\n}\n}  // namespace polyred\n")
file(WRITE ${OUT} "${body}")
