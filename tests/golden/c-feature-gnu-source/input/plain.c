/* No feature-test macro, and a local header that sets none: the include
 * stays on line 1. */
#include <stdio.h>
#include "util.h"

size_t twice(size_t n) { return 2 * n; }
