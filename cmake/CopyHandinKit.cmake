# Copies the hand-in kit's files into KIT (see cmake/HandinKit.cmake) and writes KIT/MANIFEST,
# the list of every file of the kit. Run at build time:
#   cmake -DKIT=... -DSRC=<source tree> -DGENERATED=<generated headers> -DSIZES=<librsb-sizes.a>
#         -P CopyHandinKit.cmake -- OBJECT...
set(objects)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after_dashes)
    list(APPEND objects "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()

set(manifest "lib/librsb-kit.a\nkit.txt\n")
macro(kit_copy from to)
  configure_file("${from}" "${KIT}/${to}" COPYONLY)  # rewritten only when it differs
  string(APPEND manifest "${to}\n")
endmacro()

file(MAKE_DIRECTORY ${KIT}/lib ${KIT}/obj ${KIT}/generated)
kit_copy(${SIZES} lib/librsb-sizes.a)
foreach(o IN LISTS objects)
  get_filename_component(stem "${o}" NAME_WE)  # CScanTask.cpp.o -> CScanTask
  kit_copy(${o} obj/${stem}.o)
endforeach()
foreach(dir common src)
  file(GLOB_RECURSE headers RELATIVE ${SRC} ${SRC}/${dir}/*.h)
  list(SORT headers)
  foreach(h IN LISTS headers)
    kit_copy(${SRC}/${h} ${h})
  endforeach()
endforeach()
file(GLOB task_sources RELATIVE ${SRC}/src/tasks ${SRC}/src/tasks/C*Task.cpp)
list(SORT task_sources)
foreach(f ${task_sources} Tasks.cpp)
  kit_copy(${SRC}/src/tasks/${f} src/tasks/${f})
endforeach()
kit_copy(${GENERATED}/GitRevision.h generated/GitRevision.h)
file(WRITE ${KIT}/MANIFEST "${manifest}")
