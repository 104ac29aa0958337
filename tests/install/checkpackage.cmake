# Builds the Debian package from the build tree and looks inside it: its name, the dependencies
# dpkg-shlibdeps found (Qt, QCustomPlot, SentencePiece, ICU; never a sanitizer runtime), every file a
# desktop needs, a valid AppStream file, and the packaged attnscope-cli running the built-in model from the
# unpacked files. Run by CTest as deb_package:
#   cmake -DBUILD_DIR=... -DWORK=... -DSOURCE_DIR=... -P checkpackage.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
# The CI tree is built for its own CPU; the packaging is the same in a portable one, which is what is shipped.
execute_process(COMMAND cpack --config "${BUILD_DIR}/CPackConfig.cmake" -G DEB -B "${WORK}" -D CPACK_ATTNSCOPE_ANY_TREE=ON
                RESULT_VARIABLE packed OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT packed EQUAL 0)
  message(FATAL_ERROR "cpack failed (${packed}): ${out} ${err}")
endif()
file(GLOB debs "${WORK}/attnscope_*_amd64.deb")
list(LENGTH debs count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "cpack made no attnscope_VERSION_amd64.deb in ${WORK}: ${out}")
endif()
list(GET debs 0 deb)

execute_process(COMMAND dpkg-deb --field "${deb}" Package Version Architecture Depends OUTPUT_VARIABLE fields RESULT_VARIABLE ok)
if(NOT ok EQUAL 0)
  message(FATAL_ERROR "dpkg-deb cannot read ${deb}")
endif()
foreach(expected "Package: attnscope" "Architecture: amd64" "libqt6widgets6" "libqt6network6" "libqt6svg6" "libqcustomplot"
                 "libsentencepiece0" "libicu72" "libstdc++6")
  string(FIND "${fields}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the package's control fields lack '${expected}':\n${fields}")
  endif()
endforeach()
if(fields MATCHES "libasan|libubsan")
  message(FATAL_ERROR "the package depends on a sanitizer runtime:\n${fields}")
endif()

execute_process(COMMAND dpkg-deb --contents "${deb}" OUTPUT_VARIABLE contents)
foreach(path ./usr/bin/attnscope ./usr/bin/attnscope-cli ./usr/share/applications/attnscope.desktop
             ./usr/share/mime/packages/attnscope.xml ./usr/share/icons/hicolor/scalable/apps/attnscope.svg
             ./usr/share/metainfo/attnscope.metainfo.xml)
  string(FIND "${contents}" " ${path}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the package lacks ${path}:\n${contents}")
  endif()
endforeach()

# AppStream: errors fail; the one warning left is that the id is not a reverse domain name (the project has
# no domain), which software centres accept.
execute_process(COMMAND appstreamcli validate --no-net "${SOURCE_DIR}/resources/desktop/attnscope.metainfo.xml" OUTPUT_VARIABLE checked ERROR_VARIABLE checkedErr)
if(checked MATCHES "\nE: |^E: ")
  message(FATAL_ERROR "the AppStream file has errors:\n${checked}${checkedErr}")
endif()

# The packaged program runs from the unpacked files, with only the system's libraries.
execute_process(COMMAND dpkg-deb --extract "${deb}" "${WORK}/root" RESULT_VARIABLE extracted)
execute_process(COMMAND "${WORK}/root/usr/bin/attnscope-cli" info RESULT_VARIABLE ran OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT extracted EQUAL 0 OR NOT ran EQUAL 0 OR NOT out MATCHES "\"name\":\"builtin\"")
  message(FATAL_ERROR "the packaged attnscope-cli did not run: ${err}")
endif()
file(REMOVE_RECURSE "${WORK}")
