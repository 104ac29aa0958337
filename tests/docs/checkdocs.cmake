# The README and docs/ hold together: the README stays short (at most 200 lines, the rest lives in docs/),
# and every relative link in them names a file that exists and, after '#', a heading that file has.
# Run as: cmake -DROOT=<source dir> -P checkdocs.cmake
#
# A heading's anchor follows GitHub's rule for the headings this project writes: lower case, spaces become
# '-', and every other character but letters, digits, '-' and '_' goes (so "Query–key map" is
# "querykey-map"). Non-ASCII letters are dropped too, which GitHub would keep: a heading that has one and is
# linked to shows up here as a missing anchor, and is the place to look.
cmake_minimum_required(VERSION 3.20)

set(problems "")

file(READ "${ROOT}/README.md" readme)
string(REGEX MATCHALL "\n" newlines "${readme}")  # (file(STRINGS) would split lines at semicolons)
list(LENGTH newlines readme_count)
if(readme_count GREATER 200)
  string(APPEND problems "README.md has ${readme_count} lines; keep it to 200 and move the rest into docs/.\n")
endif()

function(heading_anchors file out)
  file(STRINGS "${file}" lines REGEX "^#+ ")
  set(anchors "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^#+ +" "" text "${line}")
    string(TOLOWER "${text}" text)
    string(REGEX REPLACE "[^a-z0-9 _-]" "" text "${text}")
    string(REPLACE " " "-" text "${text}")
    list(APPEND anchors "${text}")
  endforeach()
  set(${out} "${anchors}" PARENT_SCOPE)
endfunction()

file(GLOB docs "${ROOT}/docs/*.md")
set(checked 0)
foreach(md "${ROOT}/README.md" ${docs})
  file(READ "${md}" text)
  get_filename_component(dir "${md}" DIRECTORY)
  file(RELATIVE_PATH shown "${ROOT}" "${md}")
  # Markdown links and images: ](target). Targets never contain ')' or spaces here. Square brackets and
  # semicolons would change how CMake splits the list of matches, so they are swapped out first, after
  # code spans, which hold no links, are dropped.
  string(REGEX REPLACE "`[^`]*`" "" text "${text}")  # code is not a link
  string(REPLACE "[" "<" text "${text}")
  string(REPLACE "]" ">" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REGEX MATCHALL ">\\([^) ]+\\)" links "${text}")
  foreach(link IN LISTS links)
    string(REGEX REPLACE "^>\\((.*)\\)$" "\\1" target "${link}")
    if(target MATCHES "^[a-z]+:")  # http:, https:, mailto:
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    set(path "${target}")
    set(anchor "")
    if(target MATCHES "#")
      string(REGEX REPLACE "#.*$" "" path "${target}")
      string(REGEX REPLACE "^[^#]*#" "" anchor "${target}")
    endif()
    if(path STREQUAL "")
      set(file "${md}")
    else()
      set(file "${dir}/${path}")
    endif()
    if(NOT EXISTS "${file}")
      string(APPEND problems "${shown} links to ${target}, and ${path} does not exist.\n")
      continue()
    endif()
    if(NOT anchor STREQUAL "")
      heading_anchors("${file}" anchors)
      if(NOT anchor IN_LIST anchors)
        string(APPEND problems "${shown} links to ${target}, and that file has no heading with the anchor '${anchor}'.\n")
      endif()
    endif()
  endforeach()
endforeach()

if(checked LESS 10)
  string(APPEND problems "Only ${checked} relative links were found; the link pattern no longer matches the files.\n")
endif()
if(NOT problems STREQUAL "")
  message(FATAL_ERROR "${problems}")
endif()
message(STATUS "README.md: ${readme_count} lines; ${checked} relative links in README.md and docs/ resolve.")
