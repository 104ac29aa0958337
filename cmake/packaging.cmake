# `cpack -G DEB` in a build tree makes attnscope_VERSION_amd64.deb from what `cmake --install` installs
# (app/CMakeLists.txt): the two programs, the desktop entry, the scene file type, the icon and the AppStream
# metainfo. Its dependencies are not listed by hand: dpkg-shlibdeps reads them from the libraries the
# programs link, so they follow the build. A package must run on any x86-64 machine, so cpack refuses a tree
# built with ATTNSCOPE_NATIVE (-march=native) or the sanitizers (cmake/packagecheck.cmake); the test of the
# packaging (tests/install/checkpackage.cmake) passes CPACK_ATTNSCOPE_ANY_TREE to look inside one anyway.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME attnscope)
set(CPACK_PACKAGE_VENDOR "AttnScope")
set(CPACK_PACKAGE_CONTACT "AttnScope maintainers <maintainers@attnscope.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "see how a transformer's attention heads read a sentence you type")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}
 AttnScope runs a sentence through every layer and head of a transformer and draws each head's attention
 as a heatmap, redrawn on every keystroke. It opens on a small model it trained itself and loads GPT-2,
 Llama, BERT, BART, Marian and T5 checkpoints from Hugging Face folders or the Hugging Face cache, offline.
 attnscope-cli prints the same numbers as JSON.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # attnscope_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_ATTNSCOPE_PORTABLE_TREE ON)
if(ATTNSCOPE_NATIVE OR ATTNSCOPE_SANITIZE)
  set(CPACK_ATTNSCOPE_PORTABLE_TREE OFF)
endif()
set(CPACK_PRE_BUILD_SCRIPTS ${CMAKE_CURRENT_LIST_DIR}/packagecheck.cmake)
include(CPack)
