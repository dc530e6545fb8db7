/* fuzz_python: the Python rewriter on arbitrary source (see rewrite_check.h
 * for what is checked). The rules use every Python rule kind, with globs so
 * that they match whatever functions, classes and calls the input has. */
#include "rewrite_check.h"

static const char rules[] =
    "targets:\n"
    "  m:\n"
    "    func_context_wrappings:\n"
    "      \"[a-m]*\": {}\n"
    "      \"[n-z]*\":\n"
    "        wrap_calls:\n"
    "          - call_pattern: \"*\"\n"
    "    class_func_context_wrappings:\n"
    "      \"*\":\n"
    "        \"*\": {context_values: [\"method\"]}\n"
    "    func_line_range_wrappings:\n"
    "      - {start_line: 2, end_line: 3}\n"
    "      - {start_line: 5, end_line: 9}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_rewrite_check(data, size, LANG_PYTHON, "m.py", rules);
  return 0;
}
