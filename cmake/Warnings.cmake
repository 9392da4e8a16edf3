# Warning and sanitizer flags for ddl's own targets only.
add_library(ddl_warnings INTERFACE)
target_compile_options(ddl_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
  -Wnull-dereference -Wcast-align -Wextra-semi -Wconversion -Wsign-conversion
  -Wformat=2 -Wimplicit-fallthrough)
if(DDL_WERROR)
  target_compile_options(ddl_warnings INTERFACE -Werror)
endif()
if(DDL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
