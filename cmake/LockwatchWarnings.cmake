# One place for the warning set, so every target gets the same one.
function(lockwatch_set_warnings target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wold-style-cast -Wconversion -Wsign-conversion -Wimplicit-fallthrough)
  if(LOCKWATCH_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
