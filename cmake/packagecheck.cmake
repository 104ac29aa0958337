# Run by cpack before it builds the package (CPACK_PRE_BUILD_SCRIPTS): a package from a tree compiled for
# this machine's CPU, or with the sanitizers, would not run, or not run well, elsewhere.
if(NOT CPACK_ATTNSCOPE_PORTABLE_TREE AND NOT CPACK_ATTNSCOPE_ANY_TREE)
  message(FATAL_ERROR "this build tree was configured with ATTNSCOPE_NATIVE or ATTNSCOPE_SANITIZE, so its programs "
                      "would not run on every x86-64 machine; package a portable tree instead (docs/user-guide.md#installing).")
endif()
