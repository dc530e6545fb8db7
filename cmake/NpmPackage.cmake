# Fetch a pinned npm package tarball at configure time and unpack it.
#
# Why npm: it is the one registry reachable here that carries both the official
# tree-sitter grammars (generated parser.c/scanner.c) and, in the `tree-sitter`
# package's vendor/ folder, the core library's C sources at a matching version.
# Each tarball is pinned by version AND by SHA-512; a mismatch stops the build.
# Tarballs are cached in NCREWRITE_DEPS_DIR so rebuilds and extra build trees
# (sanitizers, benchmarks) do not fetch again. Nothing fetched is committed.

set(NCREWRITE_DEPS_DIR "${CMAKE_SOURCE_DIR}/.deps" CACHE PATH
    "Cache for pinned third-party tarballs (git-ignored)")

function(nc_npm_package name version sha512 out_dir)
  set(tgz "${NCREWRITE_DEPS_DIR}/${name}-${version}.tgz")
  set(dest "${NCREWRITE_DEPS_DIR}/${name}-${version}")
  file(MAKE_DIRECTORY "${NCREWRITE_DEPS_DIR}")
  if(EXISTS "${tgz}")
    file(SHA512 "${tgz}" have)
    if(NOT have STREQUAL sha512)
      file(REMOVE "${tgz}")
      file(REMOVE_RECURSE "${dest}")
    endif()
  endif()
  if(NOT EXISTS "${tgz}")
    find_program(NPM_EXECUTABLE npm)
    if(NOT NPM_EXECUTABLE)
      message(FATAL_ERROR "npm is needed to fetch ${name}@${version} (apt-get install npm)")
    endif()
    message(STATUS "Fetching ${name}@${version} from the npm registry")
    execute_process(
      COMMAND "${NPM_EXECUTABLE}" pack "${name}@${version}"
              --pack-destination "${NCREWRITE_DEPS_DIR}" --silent
      WORKING_DIRECTORY "${NCREWRITE_DEPS_DIR}"
      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT EXISTS "${tgz}")
      message(FATAL_ERROR "npm pack ${name}@${version} failed: ${err}")
    endif()
    file(SHA512 "${tgz}" have)
    if(NOT have STREQUAL sha512)
      file(REMOVE "${tgz}")
      message(FATAL_ERROR "${name}@${version}: SHA-512 mismatch\n  want ${sha512}\n  got  ${have}")
    endif()
  endif()
  if(NOT EXISTS "${dest}/package")
    file(REMOVE_RECURSE "${dest}")
    file(ARCHIVE_EXTRACT INPUT "${tgz}" DESTINATION "${dest}")
  endif()
  set(${out_dir} "${dest}/package" PARENT_SCOPE)
endfunction()
