# Install layout (`cmake --install build --prefix P`):
#   P/bin/ncrewrite, ncrun, nctrace
#   P/lib/libncrt.so                     the collector (NVTX/CUDA injection)
#   P/lib/ncrewrite/python/ncrt*.so      the ncrt Python module, one per CPython version
#   P/include/ncrt.h                     the one public header
#   P/lib/pkgconfig/ncrt.pc              pkg-config --cflags --libs ncrt
#   P/lib/cmake/ncrewrite/               find_package(ncrewrite)
#   P/share/man/man1/*.1, P/share/ncrewrite/rules/*.yaml
# Every path ncrun needs is relative to its own directory, so the prefix can
# be moved after installing. (lib/ is GNUInstallDirs' LIBDIR.)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NC_PY_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/ncrewrite/python)

foreach(t ncrewrite nctrace ncrun)
  if(TARGET ${t})
    install(TARGETS ${t} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
if(TARGET ncrt)
  install(TARGETS ncrt LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/src/runtime/include/ncrt.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endif()
# the ncrt module, one file per CPython version it was built for
get_property(nc_py_targets GLOBAL PROPERTY NC_PY_MODULE_TARGETS)
if(nc_py_targets)
  install(TARGETS ${nc_py_targets} LIBRARY DESTINATION ${NC_PY_INSTALL_DIR})
endif()
if(TARGET ncrun)
  # ncrun finds libncrt.so and the module from its own directory: in the build
  # tree they sit beside it; installed, at these paths relative to bin/.
  file(RELATIVE_PATH nc_rel_lib /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})
  file(RELATIVE_PATH nc_rel_py /${CMAKE_INSTALL_BINDIR} /${NC_PY_INSTALL_DIR})
  target_compile_definitions(ncrun PRIVATE NCRUN_REL_LIB="${nc_rel_lib}" NCRUN_REL_PY="${nc_rel_py}")
endif()

file(GLOB nc_man ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(FILES ${nc_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
file(GLOB nc_rules ${PROJECT_SOURCE_DIR}/rules/*.yaml)
install(FILES ${nc_rules} DESTINATION ${CMAKE_INSTALL_DATADIR}/ncrewrite/rules)

# pkg-config: ncrt.h is header-only over NVTX v3, so --cflags is what matters;
# the `injection` variable names the collector for NVTX_INJECTION64_PATH.
if(TARGET ncrt)
  set(NC_PC_NVTX_CFLAGS "")
  if(NC_NVTX_INCLUDE)
    set(NC_PC_NVTX_CFLAGS "-I${NC_NVTX_INCLUDE}")
  endif()
  set(NC_PC_LIBS "")
  foreach(l ${CMAKE_DL_LIBS})
    string(APPEND NC_PC_LIBS " -l${l}")
  endforeach()
  file(RELATIVE_PATH NC_PC_UP /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
  string(REGEX REPLACE "/$" "" NC_PC_UP "${NC_PC_UP}")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/package/ncrt.pc.in ${PROJECT_BINARY_DIR}/ncrt.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/ncrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# The CMake package: relocatable, found from P via CMAKE_PREFIX_PATH.
set(NC_CFG_NVTX_INCLUDE "")
if(NC_NVTX_INCLUDE)
  set(NC_CFG_NVTX_INCLUDE "${NC_NVTX_INCLUDE}")
endif()
set(NC_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ncrewrite)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/package/ncrewriteConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/ncrewriteConfig.cmake
                              INSTALL_DESTINATION ${NC_CMAKE_INSTALL_DIR}
                              PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ncrewriteConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ncrewriteConfig.cmake ${PROJECT_BINARY_DIR}/ncrewriteConfigVersion.cmake
        DESTINATION ${NC_CMAKE_INSTALL_DIR})
