/* fuzz_c: the C, C++ and CUDA rewriter on arbitrary source, each input
 * read as all three languages (see rewrite_check.h for what is checked). */
#include "rewrite_check.h"

static const char rules[] =
    "targets:\n"
    "  \"*\":\n"
    "    func_context_wrappings:\n"
    "      \"[a-m]*\": {}\n"
    "      \"*::*\": {}\n"
    "    call_wrappings:\n"
    "      - call_pattern: \"[n-z]*\"\n"
    "    func_line_range_wrappings:\n"
    "      - {start_line: 2, end_line: 3}\n"
    "      - {start_line: 5, end_line: 9}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_rewrite_check(data, size, LANG_C, "f.c", rules);
  fuzz_rewrite_check(data, size, LANG_CPP, "f.cpp", rules);
  fuzz_rewrite_check(data, size, LANG_CUDA, "f.cu", rules);
  return 0;
}
