# Writes OUT (a header defining POLYRED_GIT_HASH) from the commit of SRC, at build time,
# and only when it changed, so `polyred --version` names the commit it was built from
# without rebuilding anything else. "-dirty" marks uncommitted changes to tracked files.
execute_process(COMMAND git rev-parse --short HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE hash OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE failed)
if(failed OR NOT hash)
  set(hash "unknown")
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(changes)
    string(APPEND hash "-dirty")
  endif()
endif()
set(content "#define POLYRED_GIT_HASH \"${hash}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUT} "${content}")
endif()
