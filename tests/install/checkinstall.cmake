# Installs the build tree into a fresh prefix and checks what a desktop needs is there and agrees with
# itself: both programs, the desktop entry naming the program and the icon that were installed, the scene
# file type the entry claims, and the icon in the hicolor theme. Run by CTest as install_layout:
#   cmake -DBUILD_DIR=... -DPREFIX=... -P checkinstall.cmake
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" RESULT_VARIABLE installed OUTPUT_QUIET)
if(NOT installed EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${installed})")
endif()

foreach(path bin/attnscope bin/attnscope-cli share/applications/attnscope.desktop share/mime/packages/attnscope.xml
             share/icons/hicolor/scalable/apps/attnscope.svg)
  if(NOT EXISTS "${PREFIX}/${path}")
    message(FATAL_ERROR "the install lacks ${path}")
  endif()
endforeach()

file(STRINGS "${PREFIX}/share/applications/attnscope.desktop" entry)
foreach(line "[Desktop Entry]" "Type=Application" "Exec=attnscope %f" "Icon=attnscope" "MimeType=application/x-attnscope-scene;")
  list(FIND entry "${line}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the desktop entry lacks the line '${line}'")
  endif()
endforeach()
file(READ "${PREFIX}/share/mime/packages/attnscope.xml" mime)
if(NOT mime MATCHES "type=\"application/x-attnscope-scene\"" OR NOT mime MATCHES "pattern=\"\\*\\.attnscope\"")
  message(FATAL_ERROR "the MIME package does not declare application/x-attnscope-scene for *.attnscope")
endif()
file(READ "${PREFIX}/share/icons/hicolor/scalable/apps/attnscope.svg" icon)
if(NOT icon MATCHES "<svg")
  message(FATAL_ERROR "the installed icon is not an SVG")
endif()

# Both installed programs run on their own (the built-in model, the lessons and the icon are compiled in):
# with no files beside it, attnscope-cli still opens the trained built-in model.
execute_process(COMMAND "${PREFIX}/bin/attnscope-cli" info RESULT_VARIABLE ran OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT ran EQUAL 0 OR NOT out MATCHES "\"name\":\"builtin\"" OR NOT out MATCHES "\"layers\":3")
  message(FATAL_ERROR "the installed attnscope-cli did not run: ${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E env QT_QPA_PLATFORM=offscreen "${PREFIX}/bin/attnscope" --help
                RESULT_VARIABLE ran OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT ran EQUAL 0 OR NOT out MATCHES "FILE.attnscope")
  message(FATAL_ERROR "the installed attnscope did not run: ${err}")
endif()
file(REMOVE_RECURSE "${PREFIX}")
