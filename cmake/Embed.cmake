# SPDX-License-Identifier: MIT
# Embeds the completion scripts and the `ddl init` templates into ddl_util, so
# that `ddl completions` and `ddl init` print exactly the installed files.
# The generated source defines ddl::embedded_files() (src/util/embedded.hpp).
file(GLOB DDL_EMBEDDED_TEMPLATES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/templates/*.toml ${PROJECT_SOURCE_DIR}/templates/*.yaml)
set(DDL_EMBEDDED_FILES
  ${PROJECT_SOURCE_DIR}/completions/ddl.bash
  ${PROJECT_SOURCE_DIR}/completions/_ddl
  ${PROJECT_SOURCE_DIR}/completions/ddl.fish
  ${DDL_EMBEDDED_TEMPLATES})
set(DDL_EMBEDDED_SOURCE ${PROJECT_BINARY_DIR}/generated/ddl_embedded_files.cpp)
add_custom_command(
  OUTPUT ${DDL_EMBEDDED_SOURCE}
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DOUTPUT=${DDL_EMBEDDED_SOURCE}
          "-DFILES=${DDL_EMBEDDED_FILES}" -P ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
  DEPENDS ${DDL_EMBEDDED_FILES} ${PROJECT_SOURCE_DIR}/cmake/embed_files.cmake
  COMMENT "Embedding completions and templates"
  VERBATIM)
target_sources(ddl_util PRIVATE ${DDL_EMBEDDED_SOURCE})
