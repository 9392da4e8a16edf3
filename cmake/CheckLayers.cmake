# SPDX-License-Identifier: MIT
# Layering, checked on every build (ARCHITECTURE.md): a file may include its own
# folder and the layers below it, never one above; toml++, libssh, CLI11,
# OpenSSL and RE2 each stay in their one folder. Run with -P by the ddl_layers_checked target.
if(CMAKE_SCRIPT_MODE_FILE)
  # Each folder and the folders its files may include ("self" = its own layer).
  set(allow_src/util "src/util")
  set(allow_src/job "src/util;src/job")
  set(allow_src/inventory "src/util;src/job;src/inventory")
  set(allow_src/plan "src/util;src/job;src/inventory;src/plan")
  set(allow_src/persona "src/util;src/job;src/inventory;src/plan;src/persona")
  set(allow_src/render "src/util;src/job;src/inventory;src/plan;src/render")
  set(allow_src/launch "src/util;src/job;src/inventory;src/plan;src/render;src/launch")
  set(allow_src/sweep "src/util;src/job;src/inventory;src/plan;src/sweep")
  set(allow_src/collectives "src/util;src/collectives")
  set(allow_src/pmix "src/util;src/pmix")
  set(allow_rendezvous "src/util;src/job;src/inventory;src/plan;rendezvous")
  set(allow_backends "src/util;src/job;src/inventory;src/plan;src/render;src/launch;backends")
  set(allow_src/session "src/util;src/job;src/inventory;src/plan;src/persona;src/render;src/launch;src/sweep;src/pmix;src/collectives;rendezvous;backends;src/session")
  set(allow_cmd "src;rendezvous;backends;cmd")
  # A library's headers and the one folder that may include them.
  set(library_patterns "<toml\\+\\+/" "<libssh/" "<CLI/" "<openssl/" "<re2/")
  set(library_folders "src/job" "backends/ssh" "cmd" "rendezvous" "src/util")

  set(problems "")
  foreach(layer src/util src/job src/inventory src/plan src/persona src/render src/launch src/sweep src/collectives
                src/pmix rendezvous backends src/session cmd)
    file(GLOB_RECURSE files RELATIVE ${ROOT} ${ROOT}/${layer}/*.cpp ${ROOT}/${layer}/*.hpp)
    foreach(file ${files})
      file(STRINGS ${ROOT}/${file} includes REGEX "^#include [\"<]")
      foreach(line ${includes})
        if(line MATCHES "^#include \"((src/[a-z]+|rendezvous|backends|cmd)/[^\"]*)\"")
          set(target ${CMAKE_MATCH_1})
          set(ok FALSE)
          foreach(allowed ${allow_${layer}})
            string(LENGTH "${allowed}/" n)
            string(SUBSTRING "${target}" 0 ${n} head)
            if(head STREQUAL "${allowed}/")
              set(ok TRUE)
            endif()
          endforeach()
          if(NOT ok)
            string(APPEND problems "${file}: ${line}: ${layer}/ may not include a higher layer\n")
          endif()
        endif()
        foreach(pattern folder IN ZIP_LISTS library_patterns library_folders)
          string(LENGTH "${folder}/" n)
          string(SUBSTRING "${file}" 0 ${n} head)
          if(line MATCHES "${pattern}" AND NOT head STREQUAL "${folder}/")
            string(APPEND problems "${file}: ${line}: only ${folder}/ may include this library\n")
          endif()
        endforeach()
      endforeach()
    endforeach()
  endforeach()
  if(problems)
    message(FATAL_ERROR "layering broken (see ARCHITECTURE.md):\n${problems}")
  endif()
  file(TOUCH ${STAMP})
  return()
endif()

file(GLOB_RECURSE DDL_LAYERED_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/*.[ch]pp ${PROJECT_SOURCE_DIR}/rendezvous/*.[ch]pp
  ${PROJECT_SOURCE_DIR}/backends/*.[ch]pp ${PROJECT_SOURCE_DIR}/cmd/*.[ch]pp)
set(DDL_LAYERS_STAMP ${PROJECT_BINARY_DIR}/layers.checked)
add_custom_command(
  OUTPUT ${DDL_LAYERS_STAMP}
  COMMAND ${CMAKE_COMMAND} -DROOT=${PROJECT_SOURCE_DIR} -DSTAMP=${DDL_LAYERS_STAMP}
          -P ${PROJECT_SOURCE_DIR}/cmake/CheckLayers.cmake
  DEPENDS ${DDL_LAYERED_SOURCES} ${PROJECT_SOURCE_DIR}/cmake/CheckLayers.cmake
  COMMENT "Checking the layering of includes"
  VERBATIM)
add_custom_target(ddl_layers_checked ALL DEPENDS ${DDL_LAYERS_STAMP})
