# ASan+UBSan for the whole build: the sanitizer CI job builds a second tree with this on.
if(LOCKWATCH_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
