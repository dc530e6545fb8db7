# One ctest test per golden case folder (label "golden"):
#   ctest -L golden          all cases
#   ctest -R golden/py-async one case
#   NC_UPDATE_GOLDEN=1 ctest -L golden   regenerate expected files for review
file(GLOB NC_GOLDEN_CASES LIST_DIRECTORIES true CONFIGURE_DEPENDS
     "${CMAKE_CURRENT_SOURCE_DIR}/golden/*")
foreach(case ${NC_GOLDEN_CASES})
  if(IS_DIRECTORY "${case}" AND EXISTS "${case}/input")
    get_filename_component(name "${case}" NAME)
    add_test(NAME golden/${name}
             COMMAND ${NC_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/golden/run.py
                     --ncrewrite $<TARGET_FILE:ncrewrite> ${case})
    set_tests_properties(golden/${name} PROPERTIES LABELS "golden")
  endif()
endforeach()
